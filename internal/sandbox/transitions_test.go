package sandbox

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// want is the transition table as a grid, written independently of
// transitions.go: one row per operation, one column per state (in
// wantStates' order). run, noop, start (needs start), resume (needs
// resume), wait, or the error code of a refusal.
var wantStates = strings.Fields("started stopped error paused archived creating starting stopping deleting pausing resuming archiving restoring")

var want = map[op]string{
	//                 started  stopped  error  paused  archived  creating starting stopping deleting pausing resuming archiving restoring
	opStart:          "noop     run      run    PAUSED  run       BUSY     BUSY     BUSY     BUSY     BUSY    BUSY     BUSY      BUSY",
	opStop:           "run      noop     run    PAUSED  noop      BUSY     BUSY     BUSY     BUSY     BUSY    BUSY     BUSY      BUSY",
	opDelete:         "run      run      run    run     run       run      run      run      run      run     run      run       run",
	opPause:          "run      NOTSTA   NOTSTA noop    NOTSTA    BUSY     BUSY     BUSY     BUSY     BUSY    BUSY     BUSY      BUSY",
	opResume:         "noop     NOTPAU   NOTPAU run     NOTPAU    NOTPAU   NOTPAU   NOTPAU   NOTPAU   NOTPAU  NOTPAU   NOTPAU    NOTPAU",
	opArchive:        "NOTSTO   run      NOTSTO NOTSTO  noop      NOTSTO   NOTSTO   NOTSTO   NOTSTO   NOTSTO  NOTSTO   NOTSTO    NOTSTO",
	opSnapshot:       "run      run      run    run     NOTRUN    BUSY     BUSY     BUSY     BUSY     BUSY    BUSY     BUSY      BUSY",
	opSnapshotMemory: "run      NOTSTA   NOTSTA run     NOTSTA    BUSY     BUSY     BUSY     BUSY     BUSY    BUSY     BUSY      BUSY",
	opFork:           "run      run      run    run     NOTRUN    BUSY     BUSY     BUSY     BUSY     BUSY    BUSY     BUSY      BUSY",
	opToolbox:        "run      start    start  resume  start     BUSY     wait     wait     BUSY     wait    wait     wait      wait",
	opInstance:       "run      NOTRUN   NOTRUN PAUSED  NOTRUN    BUSY     BUSY     BUSY     BUSY     BUSY    BUSY     BUSY      BUSY",
	opLookup:         "run      NOINST   NOINST PAUSED  NOINST    BUSY     BUSY     BUSY     BUSY     BUSY    BUSY     BUSY      BUSY",
	opUpdatePolicy:   "run      run      run    run     run       POLBUSY  run      run      POLBUSY  run     run      run       run",
	opSetEnv:         "run      run      run    PAUSED  run       BUSY     BUSY     BUSY     BUSY     BUSY    BUSY     BUSY      BUSY",
	opSetEgress:      "run      run      run    run     run       run      run      run      run      run     run      run       run",
	opResize:         "run      run      run    PAUSED  run       BUSY     BUSY     BUSY     BUSY     BUSY    BUSY     BUSY      BUSY",
	opAdopt:          "run      NOTSTA   NOTSTA NOTSTA  NOTSTA    BUSY     BUSY     BUSY     BUSY     BUSY    BUSY     BUSY      BUSY",
}

var wantRefusals = map[string]struct {
	code wire.Code
	kind errdefs.Kind
}{
	"BUSY":    {"SANDBOX_UNAVAILABLE", errdefs.KindUnavailable},
	"PAUSED":  {"SANDBOX_PAUSED", errdefs.KindConflict},
	"NOTRUN":  {"SANDBOX_NOT_RUNNING", errdefs.KindConflict},
	"NOTSTA":  {"SANDBOX_NOT_STARTED", errdefs.KindConflict},
	"NOTPAU":  {"SANDBOX_NOT_PAUSED", errdefs.KindConflict},
	"NOTSTO":  {"SANDBOX_NOT_STOPPED", errdefs.KindConflict},
	"POLBUSY": {"SANDBOX_BUSY", errdefs.KindConflict},
	"NOINST":  {"NOT_IN_CURRENT_INSTANCE", errdefs.KindNotFound},
}

var wantOutcomes = map[string]outcome{"run": run, "noop": noop, "start": needsStart, "resume": needsResume, "wait": wait}

// TestTransitionTable checks every (operation, state) pair. Operations and
// states are read from the source (the op constants here, the State
// constants of package wire), so a new one without a row, a column and a
// table entry fails.
func TestTransitionTable(t *testing.T) {
	ops := constantsOfType(t, ".", "op")
	states := constantsOfType(t, filepath.Join("..", "..", "wire"), "State")
	if len(ops) < 10 || len(states) < 10 {
		t.Fatalf("found %d operations and %d states in the source; the parser lost them", len(ops), len(states))
	}
	col := map[wire.State]int{}
	for i, s := range wantStates {
		col[wire.State(s)] = i
	}
	for _, s := range states {
		if s == string(wire.StateDeleted) { // no record has it
			continue
		}
		if _, ok := col[wire.State(s)]; !ok {
			t.Errorf("state %q has no column in want", s)
		}
		if !containsState(storedStates, wire.State(s)) {
			t.Errorf("state %q is missing from storedStates", s)
		}
	}
	for _, name := range ops {
		o := op(name)
		row, ok := want[o]
		if !ok {
			t.Errorf("operation %q has no row in want", name)
			continue
		}
		cells := strings.Fields(row)
		if len(cells) != len(wantStates) {
			t.Fatalf("want[%q] has %d cells, want %d", o, len(cells), len(wantStates))
		}
		for _, s := range wantStates {
			state := wire.State(s)
			if n := timesListed(o, state); n != 1 {
				t.Errorf("table lists state %s %d times for %q, want once", s, n, o)
			}
			cell := cells[col[state]]
			sb := &store.Sandbox{ID: "sbx-test", Name: "web", State: state}
			got, err := decide(o, sb)
			if w, ok := wantOutcomes[cell]; ok {
				if got != w || err != nil {
					t.Errorf("%s in %s: outcome %d, %v; want %s", o, s, got, err, cell)
				}
				continue
			}
			w, ok := wantRefusals[cell]
			if !ok {
				t.Fatalf("want cell %q for %s in %s is not a known outcome", cell, o, s)
			}
			var e *errdefs.Error
			if got != refuse || !errors.As(err, &e) || e.Code != w.code || e.Kind != w.kind {
				t.Errorf("%s in %s: outcome %d, %v; want refusal %s", o, s, got, err, w.code)
				continue
			}
			if !strings.Contains(e.Message, "web") || !strings.Contains(e.Message, s) || strings.Contains(e.Message, "{ref}") {
				t.Errorf("%s in %s: message %q does not name the sandbox and its state", o, s, e.Message)
			}
		}
	}
}

// An unknown state (a newer daemon's record, say) is refused, not acted on.
func TestTransitionUnknownStateIsRefused(t *testing.T) {
	for o := range table {
		if got, err := decide(o, &store.Sandbox{ID: "sbx-test", State: "hibernating"}); got != refuse || errdefs.CodeOf(err) != "SANDBOX_UNAVAILABLE" {
			t.Errorf("%s in an unknown state: %d, %v", o, got, err)
		}
	}
}

// wantHasInstance is HasInstance as a row over wantStates: a state whose
// operation may be bringing an instance up or down counts as having one.
const wantHasInstance = "yes no no yes no yes yes yes yes yes yes no yes"

// HasInstance is defined for every stored state and agrees with the
// table: an operation that needs the instance (opInstance) runs only where
// there is one, and a lookup finds none where there cannot be one.
func TestHasInstance(t *testing.T) {
	cells := strings.Fields(wantHasInstance)
	for i, s := range wantStates {
		state := wire.State(s)
		if got := HasInstance(state); got != (cells[i] == "yes") {
			t.Errorf("HasInstance(%s) = %v, want %s", s, got, cells[i])
		}
		if r := ruleFor(opInstance, state); r.outcome == run && !HasInstance(state) {
			t.Errorf("%s: the table lets an operation use an instance HasInstance says it has not", s)
		}
		if r := ruleFor(opLookup, state); r.refusal == refuseNoInstance && HasInstance(state) {
			t.Errorf("%s: a lookup says there is no instance, HasInstance says there may be", s)
		}
	}
	if HasInstance(wire.StateDeleted) || !HasInstance("hibernating") {
		t.Errorf("HasInstance: deleted %v, an unknown state %v; want false, true", HasInstance(wire.StateDeleted), HasInstance("hibernating"))
	}
}

func timesListed(o op, s wire.State) int {
	n := 0
	for _, r := range table[o] {
		for _, st := range r.states {
			if st == s {
				n++
			}
		}
	}
	return n
}

func containsState(list []wire.State, s wire.State) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// constantsOfType returns the values of the string constants of type
// typeName declared in the non-test Go files of dir.
func constantsOfType(t *testing.T, dir, typeName string) []string {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != typeName {
					continue
				}
				for _, v := range vs.Values {
					if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						s, _ := strconv.Unquote(lit.Value)
						out = append(out, s)
					}
				}
			}
		}
	}
	return out
}
