package e2b

import (
	"context"
	"net/http"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/network"
	"github.com/sbxhq/sbx/wire"
)

// E2B's fork (Sandbox.fork): the sandbox is snapshotted in place and count
// new sandboxes start from the snapshot, each on its own. sbx's native fork
// links the forks to their parent (the parent cannot be deleted alone),
// which E2B's forks are not; so this is an sbx snapshot, the forks made from
// it as Sandbox.create(snapshotID) makes them, and the snapshot deleted
// again. The forks run the parent's processes only for class gvisor (sbx
// keeps memory only there); others start fresh on the copied filesystem.

// maxE2BForks bounds one fork request, as sbx's own fork does.
const maxE2BForks = 16

// forkResultJSON is one entry of E2B's fork answer: a sandbox or an error.
type forkResultJSON struct {
	Sandbox *sandboxJSON `json:"sandbox,omitempty"`
	Error   *apiErrJSON  `json:"error,omitempty"`
}

type apiErrJSON struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (s *Server) fork(w http.ResponseWriter, r *http.Request, id string, p auth.Principal) error {
	var body struct {
		Timeout *int `json:"timeout"`
		Count   *int `json:"count"`
	}
	if r.ContentLength != 0 {
		if err := decodeJSON(w, r, &body, true); err != nil {
			return err
		}
	}
	count, timeout := 1, DefaultTimeoutSeconds
	if body.Count != nil {
		count = *body.Count
	}
	if body.Timeout != nil {
		timeout = *body.Timeout
	}
	if count < 1 || count > maxE2BForks {
		return errdefs.Invalid(wire.CodeInvalidParameter, "count must be from 1 to %d, got %d", maxE2BForks, count)
	}
	if timeout <= 0 {
		return errdefs.Invalid(wire.CodeInvalidParameter, "timeout must be a positive number of seconds, got %d", timeout)
	}
	parent, err := s.sandboxes.Get(r.Context(), id)
	if err != nil {
		return err
	}
	name := "e2b-fork-" + randomHex()
	// The expiry is a backstop: the snapshot is deleted below.
	snap, err := s.sandboxes.CreateSnapshot(r.Context(), id, wire.CreateSnapshotRequest{
		Name: name, IncludeMemory: parent.Spec.Class == "gvisor", ExpiresInSeconds: 3600})
	if err != nil {
		return err
	}
	defer s.sandboxes.DeleteSnapshot(context.WithoutCancel(r.Context()), snap.Name)
	out := make([]forkResultJSON, count)
	for i := range out {
		req := wire.CreateSandboxRequest{Snapshot: snap.Name, Labels: map[string]string{}, TTLSeconds: timeout}
		for k, v := range parent.Spec.Labels {
			req.Labels[k] = v
		}
		if !snap.Memory && parent.Spec.Egress != nil {
			req.Network, req.Egress = parent.Spec.Network, network.EgressToAPI(parent.Spec.Egress)
		}
		sb, err := s.sandboxes.Create(r.Context(), req)
		if err != nil {
			status, msg := errStatus(err)
			out[i].Error = &apiErrJSON{Code: status, Message: msg}
			continue
		}
		e := s.toE2B(sb, p, true)
		out[i].Sandbox = &e
	}
	writeJSON(w, http.StatusCreated, out)
	return nil
}
