package sandbox

import "time"

// Observer is told about the Manager's work, for metrics (internal/metrics
// implements it). Its methods are called synchronously and must not block.
type Observer interface {
	// Operation is called when an operation on one sandbox ends: op is
	// create, start, stop, pause, resume, fork, archive or restore; reason
	// is what it records with its states ("user", "lazy", "idle", …); err
	// is its result.
	Operation(op, reason string, took time.Duration, err error)
	// SchedulerLag is called when the scheduler acts on a deadline, with
	// how long after the deadline that is.
	SchedulerLag(late time.Duration)
}

// observe reports an operation that began at start; call it deferred, with
// the address of the operation's named error result.
func (m *Manager) observe(op, reason string, start time.Time, err *error) {
	if m.cfg.Observer != nil {
		m.cfg.Observer.Operation(op, reason, time.Since(start), *err)
	}
}

// observeLag reports how late a due deadline is acted on.
func (m *Manager) observeLag(deadline time.Time) {
	if m.cfg.Observer != nil {
		m.cfg.Observer.SchedulerLag(time.Since(deadline))
	}
}
