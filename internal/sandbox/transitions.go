package sandbox

import (
	"fmt"
	"strings"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// The transition table: what each operation does in each state. Every
// operation asks decide before it acts, under the sandbox's lock, so that
// which states allow what is written down once. How an operation then acts
// (freeze a started sandbox, copy a stopped one's files) is its own business.
//
// Reconcile (reconcile.go) and the policy timers (plan in policy.go) also
// look at states, but to recover or schedule, not to decide whether a
// caller may do something.

// op is an operation whose effect depends on the sandbox's state. Its
// value is the verb of its refusal message ("cannot <op> sandbox …").
type op string

const (
	opStart          op = "start"
	opStop           op = "stop"
	opDelete         op = "delete"
	opPause          op = "pause"
	opResume         op = "resume"
	opArchive        op = "archive"
	opSnapshot       op = "snapshot"           // files only
	opSnapshotMemory op = "save the memory of" // snapshot with memory
	opFork           op = "fork"
	opToolbox        op = "reach"     // exec, files, processes, previews: lazy start
	opInstance       op = "use"       // needs the running instance as it is, no lazy start
	opLookup         op = "look into" // reads what the running instance holds; never starts or resumes
	opUpdatePolicy   op = "change the policy of"
	opSetEgress      op = "change the egress policy of"
	opSetEnv         op = "change the environment of"
	opResize         op = "change the limits of" // cpu, memory, pids (resize.go)
	opAdopt          op = "adopt"                // a create takes a warm pool's instance (adopt.go)
)

// outcome is what an operation does in a state.
type outcome int

const (
	run         outcome = iota + 1 // the operation acts
	noop                           // the sandbox is already where the operation leads
	needsStart                     // start it first (restoring an archived one), then act
	needsResume                    // resume the paused sandbox first, then act
	wait                           // another operation is under way: decide again after it
	refuse                         // the operation is refused with the rule's error
)

// refusal is the error of a refused operation.
type refusal struct {
	kind errdefs.Kind
	code wire.Code
	hint string // after "cannot <op> sandbox <ref>: it is <state>; "; {ref} is the sandbox's name or id
}

var (
	refuseNotRunning = refusal{errdefs.KindConflict, wire.CodeSandboxNotRunning, `start it with "sbx start {ref}"`}
	refusePaused     = refusal{errdefs.KindConflict, wire.CodeSandboxPaused, `resume it with "sbx resume {ref}"`}
	refuseNotStarted = refusal{errdefs.KindConflict, wire.CodeSandboxNotStarted, `start it with "sbx start {ref}"`}
	refuseNotPaused  = refusal{errdefs.KindConflict, wire.CodeSandboxNotPaused, "only a paused sandbox can be resumed"}
	refuseNotStopped = refusal{errdefs.KindConflict, wire.CodeSandboxNotStopped, "only a stopped sandbox can be archived: stop it first"}
	// A lookup on a sandbox without an instance: whatever it asks for
	// belonged to an earlier instance, if any, and is gone with it.
	refuseNoInstance = refusal{errdefs.KindNotFound, wire.CodeNotInCurrentInstance, "processes, sessions, terminals and contexts live only as long as the instance that made them"}
	refusePolicyBusy = refusal{errdefs.KindConflict, wire.CodeSandboxBusy, "its policy cannot change now"}
	// An operation under way or a crash not yet reconciled: it passes.
	refuseBusy = refusal{errdefs.KindUnavailable, wire.CodeSandboxUnavailable, "try again shortly"}
)

// rule is one cell of the table.
type rule struct {
	outcome outcome
	refusal refusal // when outcome is refuse
}

// row gives one rule to several states.
type row struct {
	rule   rule
	states []wire.State
}

func on(r rule, states ...wire.State) row { return row{r, states} }
func refuseWith(r refusal) rule           { return rule{refuse, r} }

var (
	act     = rule{outcome: run}
	already = rule{outcome: noop}

	// busyStates are those an operation holds while it runs (or a crash
	// left until Reconcile).
	busyStates = []wire.State{wire.StateCreating, wire.StateStarting, wire.StateStopping, wire.StateDeleting,
		wire.StatePausing, wire.StateResuming, wire.StateArchiving, wire.StateRestoring}
	// storedStates are every state a sandbox record can be in ("deleted"
	// has no record).
	storedStates = append([]wire.State{wire.StateStarted, wire.StateStopped, wire.StateError,
		wire.StatePaused, wire.StateArchived}, busyStates...)
)

// HasInstance reports whether a sandbox in state s may hold an instance
// (its container, cgroups, network and agent binary): a started or paused
// one does, and so may one whose operation is bringing one up or down. A
// stopped, archived or errored one does not (an archive starts only from
// stopped). An unknown state (a newer daemon's record) counts as having
// one, so that nothing it may use is removed.
func HasInstance(s wire.State) bool {
	switch s {
	case wire.StateStopped, wire.StateArchiving, wire.StateArchived, wire.StateError, wire.StateDeleted:
		return false
	}
	return true
}

// table lists, for each operation, every stored state exactly once
// (TestTransitionTable in transitions_test.go checks it).
var table = map[op][]row{
	opStart: {
		on(act, wire.StateStopped, wire.StateError, wire.StateArchived),
		on(already, wire.StateStarted),
		on(refuseWith(refusePaused), wire.StatePaused),
		on(refuseWith(refuseBusy), busyStates...),
	},
	opStop: {
		on(act, wire.StateStarted, wire.StateError),
		on(already, wire.StateStopped, wire.StateArchived),
		on(refuseWith(refusePaused), wire.StatePaused),
		on(refuseWith(refuseBusy), busyStates...),
	},
	// Delete never depends on the state, nor on the agent answering.
	opDelete: {on(act, storedStates...)},
	opPause: {
		on(act, wire.StateStarted),
		on(already, wire.StatePaused),
		on(refuseWith(refuseNotStarted), wire.StateStopped, wire.StateError, wire.StateArchived),
		on(refuseWith(refuseBusy), busyStates...),
	},
	opResume: {
		on(act, wire.StatePaused),
		on(already, wire.StateStarted),
		on(refuseWith(refuseNotPaused), wire.StateStopped, wire.StateError, wire.StateArchived),
		on(refuseWith(refuseNotPaused), busyStates...),
	},
	opArchive: {
		on(act, wire.StateStopped),
		on(already, wire.StateArchived),
		on(refuseWith(refuseNotStopped), wire.StateStarted, wire.StateError, wire.StatePaused),
		on(refuseWith(refuseNotStopped), busyStates...),
	},
	// A started sandbox is frozen while its files are read.
	opSnapshot: {
		on(act, wire.StateStarted, wire.StatePaused, wire.StateStopped, wire.StateError),
		on(refuseWith(refuseNotRunning), wire.StateArchived),
		on(refuseWith(refuseBusy), busyStates...),
	},
	// A started sandbox is paused for the time.
	opSnapshotMemory: {
		on(act, wire.StateStarted, wire.StatePaused),
		on(refuseWith(refuseNotStarted), wire.StateStopped, wire.StateError, wire.StateArchived),
		on(refuseWith(refuseBusy), busyStates...),
	},
	opFork: {
		on(act, wire.StateStarted, wire.StatePaused, wire.StateStopped, wire.StateError),
		on(refuseWith(refuseNotRunning), wire.StateArchived),
		on(refuseWith(refuseBusy), busyStates...),
	},
	opToolbox: {
		on(act, wire.StateStarted),
		on(rule{outcome: needsStart}, wire.StateStopped, wire.StateError, wire.StateArchived),
		on(rule{outcome: needsResume}, wire.StatePaused),
		on(rule{outcome: wait}, wire.StateStarting, wire.StateStopping, wire.StatePausing,
			wire.StateResuming, wire.StateArchiving, wire.StateRestoring),
		on(refuseWith(refuseBusy), wire.StateCreating, wire.StateDeleting),
	},
	opInstance: {
		on(act, wire.StateStarted),
		on(refuseWith(refuseNotRunning), wire.StateStopped, wire.StateError, wire.StateArchived),
		on(refuseWith(refusePaused), wire.StatePaused),
		on(refuseWith(refuseBusy), busyStates...),
	},
	// Lookups answer from what runs: a stopped sandbox has nothing of an
	// instance to show, a paused one cannot answer until resumed.
	opLookup: {
		on(act, wire.StateStarted),
		on(refuseWith(refuseNoInstance), wire.StateStopped, wire.StateError, wire.StateArchived),
		on(refuseWith(refusePaused), wire.StatePaused),
		on(refuseWith(refuseBusy), busyStates...),
	},
	opUpdatePolicy: {
		on(act, wire.StateStarted, wire.StateStopped, wire.StateError, wire.StatePaused, wire.StateArchived,
			wire.StateStarting, wire.StateStopping, wire.StatePausing, wire.StateResuming,
			wire.StateArchiving, wire.StateRestoring),
		on(refuseWith(refusePolicyBusy), wire.StateCreating, wire.StateDeleting),
	},
	// The policy is recorded in any state and applied to an instance if one runs.
	opSetEgress: {on(act, storedStates...)},
	// The environment is recorded and given to the running agent, which a
	// paused sandbox cannot take.
	opSetEnv: {
		on(act, wire.StateStarted, wire.StateStopped, wire.StateError, wire.StateArchived),
		on(refuseWith(refusePaused), wire.StatePaused),
		on(refuseWith(refuseBusy), busyStates...),
	},
	// Limits are recorded for the next start and written to the cgroups
	// of a running instance. A paused one is refused: a class-gvisor
	// instance's memory image restores with the limits it was saved with.
	opResize: {
		on(act, wire.StateStarted, wire.StateStopped, wire.StateError, wire.StateArchived),
		on(refuseWith(refusePaused), wire.StatePaused),
		on(refuseWith(refuseBusy), busyStates...),
	},
	// Only a started pool instance, whose agent answers, is adopted; one
	// in any other state is deleted and the next one tried.
	opAdopt: {
		on(act, wire.StateStarted),
		on(refuseWith(refuseNotStarted), wire.StateStopped, wire.StateError, wire.StateArchived, wire.StatePaused),
		on(refuseWith(refuseBusy), busyStates...),
	},
}

// ruleFor returns the table's rule for o in state. A state the table does
// not list (a record from a newer daemon, say) is refused as busy.
func ruleFor(o op, state wire.State) rule {
	for _, r := range table[o] {
		for _, s := range r.states {
			if s == state {
				return r.rule
			}
		}
	}
	return refuseWith(refuseBusy)
}

// decide returns what o does to sb in its current state, and for a refused
// operation the error to return.
func decide(o op, sb *store.Sandbox) (outcome, error) {
	r := ruleFor(o, sb.State)
	if r.outcome != refuse {
		return r.outcome, nil
	}
	return refuse, r.refusal.err(o, sb)
}

func (r refusal) err(o op, sb *store.Sandbox) error {
	ref := refOf(sb)
	msg := fmt.Sprintf("cannot %s sandbox %s: it is %s; %s", o, ref, sb.State, strings.ReplaceAll(r.hint, "{ref}", ref))
	return &errdefs.Error{Kind: r.kind, Code: r.code, Message: msg}
}

// ErrNotRunning is the error of an operation that needs sb's instance,
// which it has not (see opInstance).
func ErrNotRunning(sb *store.Sandbox) error {
	if _, err := decide(opInstance, sb); err != nil {
		return err
	}
	// Started, but the instance is not attached (yet or any more).
	return refuseBusy.err(opInstance, sb)
}
