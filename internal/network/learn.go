package network

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/google/nftables"
)

// Learning: the addresses of a name a domain rule matched must be in the
// sandbox's DNS set before the sandbox gets the answer. A flood of queries
// must not turn into one kernel update per answer under the sandbox's lock
// (a policy change would wait behind them all), so each sandbox has one
// learner goroutine: DNS handlers queue answers, the learner takes what is
// queued, decides each under the sandbox's current policy and writes the
// lot to the kernel in one netlink transaction, at a bounded rate.
const (
	learnBatchAddrs = 64   // addresses per kernel transaction
	learnRate       = 512  // addresses per second per sandbox, past one batch
	learnQueue      = 1024 // answers waiting per sandbox; more get SERVFAIL
)

// learnReq is a DNS answer waiting to be learned.
type learnReq struct {
	name  string       // the name asked
	names []string     // every name the answer mentions (CNAMEs)
	ips   []netip.Addr // its IPv4 addresses
	ttl   time.Duration
	done  chan dnsVerdict // the verdict taken at learning; buffered
}

// learner is a member's queue of answers to learn.
type learner struct {
	queue chan *learnReq
	quit  chan struct{}
	once  sync.Once
}

func newLearner() *learner {
	return &learner{queue: make(chan *learnReq, learnQueue), quit: make(chan struct{})}
}

func (l *learner) stop() { l.once.Do(func() { close(l.quit) }) }

// learnAnswer queues an answer for mem's learner and waits for the verdict
// it took: dnsAllow or dnsDeny once the addresses are in the set, dnsRefuse
// if the policy changed meanwhile, dnsServFail if learning failed or the
// queue is full.
func (m *Manager) learnAnswer(ctx context.Context, mem *member, r *learnReq) dnsVerdict {
	r.done = make(chan dnsVerdict, 1)
	select {
	case mem.learn.queue <- r:
	default:
		m.logLimited("learn-queue-full", "DNS answers of a sandbox arrive faster than sbx can allow them; answering SERVFAIL", "id", mem.id)
		return dnsServFail
	}
	select {
	case v := <-r.done:
		return v
	case <-mem.learn.quit: // the sandbox's network is gone
		return dnsRefuse
	case <-ctx.Done():
		return dnsServFail
	}
}

// learnLoop runs mem's learner until its network is torn down.
func (m *Manager) learnLoop(mem *member) {
	l := mem.learn
	for {
		var batch []*learnReq
		select {
		case r := <-l.queue:
			batch = append(batch, r)
		case <-l.quit:
			l.refuseQueued()
			return
		}
		n := len(batch[0].ips)
	fill:
		for n < learnBatchAddrs {
			select {
			case r := <-l.queue:
				batch = append(batch, r)
				n += len(r.ips)
			default:
				break fill
			}
		}
		learned := m.learnBatch(mem, batch)
		// The rate limit: the next batch waits as long as the addresses
		// this one wrote are worth (refusals cost the kernel nothing).
		select {
		case <-time.After(time.Duration(learned) * time.Second / learnRate):
		case <-l.quit:
			l.refuseQueued()
			return
		}
	}
}

// refuseQueued answers what is still queued once the sandbox's network is gone.
func (l *learner) refuseQueued() {
	for {
		select {
		case r := <-l.queue:
			r.done <- dnsRefuse
		default:
			return
		}
	}
}

// learnBatch decides every answer of batch under mem's current policy and
// puts the addresses of those allowed or denied into its DNS set in one
// transaction. The sandbox's lock is held for the decision and the kernel
// update only: a policy change waits for at most one batch. It returns how
// many addresses it wrote.
func (m *Manager) learnBatch(mem *member, batch []*learnReq) int {
	mem.mu.Lock()
	defer mem.mu.Unlock()
	expires := map[netip.Addr]time.Duration{}
	verdicts := make([]dnsVerdict, len(batch))
	for i, r := range batch {
		v := mem.policy.verdict(r.name)
		if v == dnsForward && mem.policy.mode == DenyList {
			for _, n := range r.names { // a listed name reached through a CNAME
				if mem.policy.matches(n) {
					v = dnsDeny
				}
			}
		}
		verdicts[i] = v
		if v == dnsAllow || v == dnsDeny {
			for _, ip := range r.ips {
				expires[ip] = max(expires[ip], r.ttl)
			}
		}
	}
	if err := m.fw.learn(mem.id, expires); err != nil {
		m.logLimited("learn-failed", "learn DNS answers", "id", mem.id, "err", err)
		for _, r := range batch {
			r.done <- dnsServFail
		}
		return 0
	}
	for i, r := range batch {
		if v := verdicts[i]; (v == dnsAllow || v == dnsDeny) && len(r.ips) > 0 {
			mem.remember(r.name, r.ips, r.ttl)
		}
		r.done <- verdicts[i]
	}
	return len(expires)
}

// learn adds addresses to the sandbox's DNS set, each for its duration, in
// one netlink transaction. An address already there gets the new timeout
// (deleted and added again: some kernels keep the old timeout on a plain add).
func (f *firewall) learn(id string, addrs map[netip.Addr]time.Duration) error {
	if len(addrs) == 0 {
		return nil
	}
	set := &nftables.Set{
		Table:      &nftables.Table{Name: f.table, Family: nftables.TableFamilyINet},
		Name:       dnsSetName(id),
		KeyType:    nftables.TypeIPAddr,
		HasTimeout: true,
	}
	var plain, timed []nftables.SetElement
	for ip, ttl := range addrs {
		plain = append(plain, nftables.SetElement{Key: ip.AsSlice()})
		timed = append(timed, nftables.SetElement{Key: ip.AsSlice(), Timeout: ttl})
	}
	c, err := nftables.New()
	if err != nil {
		return err
	}
	for _, step := range []func() error{
		func() error { return c.SetAddElements(set, plain) },
		func() error { return c.SetDeleteElements(set, plain) },
		func() error { return c.SetAddElements(set, timed) },
	} {
		if err := step(); err != nil {
			return err
		}
	}
	if err := c.Flush(); err != nil {
		return fmt.Errorf("netlink: add to set %s: %w", set.Name, err)
	}
	return nil
}

// logLimited logs msg at most once per logEvery for each key, saying how
// many were left out: a sandbox must not flood the daemon's log.
func (m *Manager) logLimited(key, msg string, args ...any) {
	const logEvery = 10 * time.Second
	m.logMu.Lock()
	now := time.Now()
	st := m.logSeen[key]
	if st.last.Add(logEvery).After(now) {
		st.dropped++
		m.logSeen[key] = st
		m.logMu.Unlock()
		return
	}
	m.logSeen[key] = logState{last: now}
	m.logMu.Unlock()
	if st.dropped > 0 {
		args = append(args, "suppressed", st.dropped)
	}
	m.log.Warn(msg, args...)
}

// logState is when a rate-limited line was last logged, and how many were
// left out since.
type logState struct {
	last    time.Time
	dropped int
}
