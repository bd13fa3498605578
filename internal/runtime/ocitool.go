package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// ociTool is what the runc and runsc drivers share: both drive a command
// line tool with the OCI runtime verbs (state, kill, delete, list, …) and
// fail the same way.
type ociTool struct {
	name   string   // "runc" or "runsc", for messages
	binary string   // the tool's path
	flags  []string // global flags before every verb (--root, …)
}

// run runs the verb args[0] and returns its stdout; a failure is a
// *toolError with what the tool said.
func (t *ociTool) run(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, t.binary, append(append([]string(nil), t.flags...), args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := runTool(cmd); err != nil {
		return nil, &toolError{tool: t.name, cmd: args[0], output: lastLines(stderr.String()+stdout.String(), 5), err: err}
	}
	return stdout.Bytes(), nil
}

// toolError carries what the tool said, which tells what went wrong.
type toolError struct {
	tool, cmd string
	output    string // the last lines of stderr and stdout
	err       error
}

func (e *toolError) Error() string {
	return fmt.Sprintf("%s %s: %v: %s", e.tool, e.cmd, e.err, e.output)
}
func (e *toolError) Unwrap() error { return e.err }

// notExist reports whether the tool failed because the instance does not
// exist (both say "… does not exist").
func notExist(err error) bool {
	var te *toolError
	return errors.As(err, &te) && strings.Contains(te.output, "does not exist")
}

// notRunning reports whether runsc failed because the instance has stopped:
// its sandbox process, which runsc talks to, is gone.
func notRunning(err error) bool {
	var te *toolError
	return errors.As(err, &te) && (strings.Contains(te.output, "connection refused") || strings.Contains(te.output, "is not running"))
}

// deleteInstance force-deletes the instance and removes its cgroups in
// every hierarchy; if they were in the way, the delete runs once more
// (processes the tool could not kill are gone now). An instance that does
// not exist is no error.
func (t *ociTool) deleteInstance(ctx context.Context, id string) error {
	del := func() error {
		_, err := t.run(ctx, "delete", "--force", id)
		return err
	}
	derr := del()
	cerr := removeCgroups(id)
	if derr != nil && cerr == nil {
		derr = del()
	}
	if derr != nil && !notExist(derr) {
		return errdefs.Internal(derr, "delete instance %s", id)
	}
	if cerr != nil {
		return errdefs.Internal(cerr, "remove cgroups of instance %s", id)
	}
	return nil
}

// list returns the ids of every instance under the tool's root, running or
// not.
func (t *ociTool) list(ctx context.Context) ([]string, error) {
	out, err := t.run(ctx, "list", "--format", "json")
	if err != nil {
		return nil, errdefs.Internal(err, "list instances")
	}
	var cs []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(out, &cs); err != nil {
		return nil, errdefs.Internal(err, "decode %s list", t.name)
	}
	ids := make([]string, 0, len(cs))
	for _, c := range cs {
		ids = append(ids, c.ID)
	}
	return ids, nil
}

// ociState is the part of the tool's state document the drivers read.
type ociState struct {
	Pid    int    `json:"pid"`
	Status string `json:"status"` // "created", "running", "paused", "stopped"
}

// state reads the state of instance id; a missing one is NotFound.
func (t *ociTool) state(ctx context.Context, id string) (ociState, error) {
	var s ociState
	if err := validID(id); err != nil {
		return s, err
	}
	out, err := t.run(ctx, "state", id)
	if err != nil {
		if notExist(err) {
			return s, errdefs.NotFound(wire.CodeInstanceNotFound, "instance %s not found", id)
		}
		return s, errdefs.Internal(err, "state of instance %s", id)
	}
	if err := json.Unmarshal(out, &s); err != nil {
		return s, errdefs.Internal(err, "decode %s state of %s", t.name, id)
	}
	return s, nil
}

// status is State for both drivers. A paused instance counts as running:
// its processes exist and its pid is valid.
func (t *ociTool) status(ctx context.Context, id string) (Status, error) {
	s, err := t.state(ctx, id)
	if err != nil {
		return Status{}, err
	}
	st := Status{ID: id, Running: (s.Status == "running" || s.Status == "paused") && s.Pid > 0}
	if st.Running {
		st.Pid = s.Pid
	}
	return st, nil
}

// paused is Freezer.Paused for both drivers.
func (t *ociTool) paused(ctx context.Context, id string) (bool, error) {
	s, err := t.state(ctx, id)
	return s.Status == "paused", err
}

// freeze runs verb ("pause" or "resume") on instance id. A missing
// instance is NotFound; resuming one that is not paused is not an error.
func (t *ociTool) freeze(ctx context.Context, verb, id string) error {
	if err := validID(id); err != nil {
		return err
	}
	if _, err := t.run(ctx, verb, id); err != nil {
		if notExist(err) {
			return errdefs.NotFound(wire.CodeInstanceNotFound, "instance %s not found", id)
		}
		if p, perr := t.paused(ctx, id); verb == "resume" && perr == nil && !p {
			return nil
		}
		return errdefs.Internal(err, "%s instance %s", verb, id)
	}
	return nil
}
