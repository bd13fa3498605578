package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/httpjson"
	"github.com/sbxhq/sbx/internal/kube/podspec"
	"github.com/sbxhq/sbx/internal/sandbox"
	"github.com/sbxhq/sbx/wire"
)

// update is PATCH /v1/sandboxes/{id}. The sandbox's settings live in its
// Sandbox object, not only on the host that runs it now: the host running
// it (if any) applies the change first (it checks it, resizes the running
// instance, gives new processes the env); then the change is written into
// the object's request (podspec.SetRequest), so a suspended sandbox shows
// it and its next pod carries it to whichever host; a TTL becomes the
// object's shutdownTime (podspec.SetTTL).
func (s *Server) update(w http.ResponseWriter, r *http.Request) error {
	var upd wire.UpdateSandboxRequest
	if err := httpjson.Decode(w, r, &upd); err != nil {
		return err
	}
	e, err := s.cluster.find(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	sb, err := s.updateEntry(r.Context(), e, upd)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, sb)
	return nil
}

// updateEntry applies upd to e as update describes.
func (s *Server) updateEntry(ctx context.Context, e entry, upd wire.UpdateSandboxRequest) (wire.Sandbox, error) {
	if e.obj.DeletionTimestamp != nil {
		return wire.Sandbox{}, errdefs.Conflict(wire.CodeInvalidState, "sandbox %s is being deleted", e.ref())
	}
	if err := sandbox.ValidateUpdate(upd); err != nil {
		return wire.Sandbox{}, err
	}
	cur, err := podspec.RequestOf(e.obj)
	if err != nil {
		return wire.Sandbox{}, errdefs.Invalid(wire.CodeInvalidSandbox, "sandbox %s: %v", e.ref(), err)
	}
	if cur, err = s.valuesNow(ctx, e, cur); err != nil { // values.go
		return wire.Sandbox{}, err
	}
	next := podspec.Updated(cur, upd)
	if err := sandbox.ValidateCreate(&next); err != nil {
		return wire.Sandbox{}, err
	}
	var onHost *wire.Sandbox
	if p := s.cluster.placementOf(e); p.onHost {
		body, _ := json.Marshal(upd) // plain fields: cannot fail
		var sb wire.Sandbox
		status, answer, err := s.hostCall(ctx, http.MethodPatch, p.api, "/v1/sandboxes/"+e.id, body, &sb)
		if err != nil {
			return wire.Sandbox{}, errdefs.Unavailable(wire.CodeSandboxUnavailable, "the sbx host of sandbox %s did not answer: %v", e.ref(), err)
		}
		if status != http.StatusOK { // the host refused it: its answer, as on one host
			return wire.Sandbox{}, hostRefusal(status, answer)
		}
		onHost = &sb
	}
	if e, err = s.setRequest(ctx, e, next, upd.TTLSeconds); err != nil {
		return wire.Sandbox{}, err
	}
	if onHost != nil {
		return merged(e, *onHost), nil
	}
	return s.cluster.objectView(e, s.cluster.placementOf(e)), nil
}

// hostRefusal is a host's error answer as the error it stands for.
func hostRefusal(status int, answer []byte) error {
	var body wire.ErrorResponse
	if json.Unmarshal(answer, &body) != nil || body.Error.Code == "" {
		return errdefs.Unavailable(wire.CodeSandboxUnavailable, "the sbx host answered %d: %.200s", status, answer)
	}
	return &errdefs.Error{Kind: httpjson.KindOf(status), Code: body.Error.Code, Message: body.Error.Message}
}

// setRequest writes req (and a TTL of ttl seconds from now, when ttl is
// set) into e's object, again on a conflict with another writer.
func (s *Server) setRequest(ctx context.Context, e entry, req wire.CreateSandboxRequest, ttl *int) (entry, error) {
	api := s.cluster.Agents.AgentsV1beta1().Sandboxes(e.obj.Namespace)
	for attempt := 0; ; attempt++ {
		obj, err := api.Get(ctx, e.obj.Name, metav1.GetOptions{})
		if err != nil {
			return e, kubeError(err, e)
		}
		if obj.UID != e.obj.UID {
			return e, errdefs.NotFound(wire.CodeSandboxNotFound, "sandbox %q not found", e.ref())
		}
		v := podspec.SetRequest(obj, req)
		if ttl != nil {
			podspec.SetTTL(obj, *ttl, time.Now())
		}
		made, err := api.Update(ctx, obj, metav1.UpdateOptions{FieldManager: "sbx-gateway"})
		if err == nil && podspec.ValuesRef(made.Spec.PodTemplate.ObjectMeta.Annotations) != "" {
			err = s.writeValues(ctx, made, v) // values.go
		}
		if err == nil {
			return entryOf(made), nil
		}
		if !apierrors.IsConflict(err) || attempt == 4 {
			return e, kubeError(err, e)
		}
	}
}

// hostCall sends one JSON request to a host's API and returns its status
// and body; a 200 answer is decoded into out.
func (s *Server) hostCall(ctx context.Context, method, base, path string, body []byte, out any) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, base+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	s.hostAuth(ctx, req.Header, nil) // identity.go
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.hosts.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return 0, nil, err
	}
	if resp.StatusCode == http.StatusOK && out != nil {
		if err := json.Unmarshal(answer, out); err != nil {
			return 0, nil, err
		}
	}
	return resp.StatusCode, answer, nil
}
