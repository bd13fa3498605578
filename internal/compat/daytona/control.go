package daytona

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/httpjson"
	"github.com/sbxhq/sbx/internal/sandbox"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// The control plane: Daytona's /sandbox routes onto the Manager.

// decode reads a JSON body into v: Daytona's clients send fields sbx does
// not know, so unknown fields pass; malformed JSON is a 400.
func decode(w http.ResponseWriter, r *http.Request, v any) error { return decodeBody(w, r, v, false) }

// decodeStrict is decode for bodies whose every Daytona field v has (the
// API client's models: create, snapshot, volume, network settings, warm
// pool): a field it lacks is a 400 naming it, never dropped.
func decodeStrict(w http.ResponseWriter, r *http.Request, v any) error {
	return decodeBody(w, r, v, true)
}

func decodeBody(w http.ResponseWriter, r *http.Request, v any, strict bool) error {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, httpjson.MaxBody))
	if strict {
		dec.DisallowUnknownFields()
	}
	err := dec.Decode(v)
	var tooLarge *http.MaxBytesError
	switch {
	case err == nil, errors.Is(err, io.EOF):
		return nil
	case errors.As(err, &tooLarge):
		return errdefs.TooLarge(wire.CodeBodyTooLarge, "the request body is larger than %d bytes", httpjson.MaxBody)
	}
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return invalid(wire.CodeFeatureUnsupported, "field %s is not supported by sbx's Daytona compatibility layer", f)
	}
	return invalid(wire.CodeInvalidJSON, "the request body is not valid JSON: %v", err)
}

// toolboxURL is the toolboxProxyUrl of every sandbox: the SDK appends
// "/{id}" and the toolbox paths.
func toolboxURL(r *http.Request) string { return baseURL(r) + toolboxPrefix }

func (h *Handler) sendSandbox(w http.ResponseWriter, r *http.Request, status int, sb *store.Sandbox) error {
	writeJSON(w, status, toDTO(sb, toolboxURL(r)))
	return nil
}

func (h *Handler) createSandbox(w http.ResponseWriter, r *http.Request) error {
	var in createRequest
	if err := decodeStrict(w, r, &in); err != nil {
		return err
	}
	req, err := h.translateCreate(r, in)
	if err != nil {
		return err
	}
	sb, err := h.cfg.Sandboxes.Create(r.Context(), req)
	if err != nil {
		return err
	}
	return h.sendSandbox(w, r, http.StatusOK, sb)
}

func (h *Handler) getSandbox(w http.ResponseWriter, r *http.Request) error {
	sb, err := h.cfg.Sandboxes.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	return h.sendSandbox(w, r, http.StatusOK, sb)
}

// deleteSandbox starts the deletion and answers the sandbox in "destroying"
// (the SDK waits for "destroyed", or for a 404).
func (h *Handler) deleteSandbox(w http.ResponseWriter, r *http.Request) error {
	sb, err := h.cfg.Sandboxes.Delete(r.Context(), r.PathValue("id"), false)
	if err != nil {
		return err
	}
	return h.sendSandbox(w, r, http.StatusOK, sb)
}

// startSandbox starts a stopped or archived sandbox and resumes a paused
// one (Daytona's start does both): the Manager decides which.
func (h *Handler) startSandbox(w http.ResponseWriter, r *http.Request) error {
	sb, err := h.cfg.Sandboxes.EnsureRunning(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	return h.sendSandbox(w, r, http.StatusOK, sb)
}

func (h *Handler) stopSandbox(w http.ResponseWriter, r *http.Request) error {
	force := r.URL.Query().Get("force") == "true"
	sb, err := h.cfg.Sandboxes.Stop(r.Context(), r.PathValue("id"), sandbox.StopOptions{Force: force})
	if err != nil {
		return err
	}
	return h.sendSandbox(w, r, http.StatusOK, sb)
}

func (h *Handler) archiveSandbox(w http.ResponseWriter, r *http.Request) error {
	sb, err := h.cfg.Sandboxes.Archive(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	return h.sendSandbox(w, r, http.StatusOK, sb)
}

func (h *Handler) pauseSandbox(w http.ResponseWriter, r *http.Request) error {
	sb, err := h.cfg.Sandboxes.Pause(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	return h.sendSandbox(w, r, http.StatusOK, sb)
}

func (h *Handler) forkSandbox(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Name string `json:"name"`
	}
	if err := decode(w, r, &in); err != nil {
		return err
	}
	res, err := h.cfg.Sandboxes.Fork(r.Context(), r.PathValue("id"), wire.ForkRequest{Name: in.Name, Count: 1})
	if err != nil {
		return err
	}
	if len(res.Forks) == 0 {
		return errdefs.Internal(nil, "fork made no sandbox")
	}
	return h.sendSandbox(w, r, http.StatusOK, res.Forks[0])
}

func (h *Handler) replaceLabels(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Labels map[string]string `json:"labels"`
	}
	if err := decode(w, r, &in); err != nil {
		return err
	}
	if in.Labels == nil {
		return invalid(wire.CodeInvalidLabel, "labels is required: an object of string values")
	}
	if k := ownLabel(in.Labels); k != "" {
		return invalid(wire.CodeInvalidLabel, "label %s is sbx's own", k)
	}
	old, err := h.cfg.Sandboxes.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	labels := withPublic(in.Labels, old.Spec.Labels[publicLabel] == "true")
	if v := old.Spec.Labels[signingLabel]; v != "" { // signed file URLs outlive a setLabels
		labels[signingLabel] = v
	}
	sb, err := h.cfg.Sandboxes.Update(r.Context(), old.ID, wire.UpdateSandboxRequest{Labels: labels})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"labels": withPublic(sb.Spec.Labels, false)})
	return nil
}

// setInterval serves POST /sandbox/{id}/{autostop|autopause|autoarchive|autodelete}/{interval}
// and /ttl/{ttlMinutes}: minutes in the path, seconds to the Manager.
func (h *Handler) setInterval(field string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		raw := r.PathValue("interval")
		min, err := strconv.Atoi(raw)
		if err != nil || min < -1 || (min < 0 && field != "autodelete") || min > maxIntervalMinutes {
			return invalid(wire.CodeInvalidParameter, "%s interval must be a whole number of minutes from 0 to %d (autodelete: -1 for never), got %q", field, maxIntervalMinutes, raw)
		}
		sec := minutesToSeconds(&min)
		var req wire.UpdateSandboxRequest
		switch field {
		case "autostop":
			req.AutoStopSeconds = sec
		case "autopause":
			req.AutoPauseSeconds = sec
		case "autoarchive":
			req.AutoArchiveSeconds = sec
		case "autodelete":
			req.AutoDeleteSeconds = sec
		case "ttl":
			req.TTLSeconds = sec
		}
		sb, err := h.cfg.Sandboxes.Update(r.Context(), r.PathValue("id"), req)
		if err != nil {
			return err
		}
		return h.sendSandbox(w, r, http.StatusOK, sb)
	}
}

// maxIntervalMinutes bounds an interval (a year) so minutes*60 stays sane.
const maxIntervalMinutes = 525600

func (h *Handler) toolboxProxyURL(w http.ResponseWriter, r *http.Request) error {
	if _, err := h.cfg.Sandboxes.Get(r.Context(), r.PathValue("id")); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]string{"url": toolboxURL(r)})
	return nil
}

// refreshActivity serves POST /sandbox/{id}/last-activity: the sandbox
// counts as used now (its idle timers start over).
func (h *Handler) refreshActivity(w http.ResponseWriter, r *http.Request) error {
	sb, err := h.cfg.Sandboxes.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	h.cfg.Sandboxes.Touch(r.Context(), sb.ID)
	w.WriteHeader(http.StatusCreated)
	return nil
}

// createSnapshot serves POST /sandbox/{id}/snapshot {name}: an sbx snapshot
// of the sandbox's filesystem, usable as create's snapshot.
func (h *Handler) createSnapshot(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Name string `json:"name"`
	}
	if err := decode(w, r, &in); err != nil {
		return err
	}
	if in.Name == "" {
		return invalid(wire.CodeInvalidSnapshotName, "name is required")
	}
	if _, err := h.cfg.Sandboxes.CreateSnapshot(r.Context(), r.PathValue("id"), wire.CreateSnapshotRequest{Name: in.Name}); err != nil {
		return err
	}
	return h.getSandbox(w, r)
}

// resizeSandbox serves POST /sandbox/{id}/resize {cpu, memory}: new limits
// (memory in GiB); a disk change is refused.
func (h *Handler) resizeSandbox(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		CPU    *float64 `json:"cpu"`
		Memory *float64 `json:"memory"`
		Disk   *float64 `json:"disk"`
	}
	if err := decode(w, r, &in); err != nil {
		return err
	}
	if in.Disk != nil {
		return invalid(wire.CodeFeatureUnsupported, "resizing the disk is not supported on sbx")
	}
	var req wire.UpdateSandboxRequest
	req.CPU = in.CPU
	if in.Memory != nil {
		if *in.Memory <= 0 {
			return invalid(wire.CodeInvalidMemory, "memory must be positive GiB")
		}
		mib := int(*in.Memory * 1024)
		req.MemoryMiB = &mib
	}
	sb, err := h.cfg.Sandboxes.Update(r.Context(), r.PathValue("id"), req)
	if err != nil {
		return err
	}
	return h.sendSandbox(w, r, http.StatusOK, sb)
}

// updateEnv serves the toolbox's POST /env {set, unset}: the environment
// of every process started from now on (sbx keeps it across restarts).
func (h *Handler) updateEnv(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Set              map[string]string `json:"set"`
		Unset            []string          `json:"unset"`
		UnsetValuePrefix string            `json:"unsetValuePrefix"`
	}
	if err := decode(w, r, &in); err != nil {
		return err
	}
	if in.UnsetValuePrefix != "" {
		return invalid(wire.CodeFeatureUnsupported, "unsetValuePrefix is not supported on sbx")
	}
	change := map[string]*string{}
	for k, v := range in.Set {
		change[k] = &v
	}
	for _, k := range in.Unset {
		change[k] = nil
	}
	if len(change) == 0 {
		return invalid(wire.CodeInvalidEnv, "set or unset is required")
	}
	if _, err := h.cfg.Sandboxes.Update(r.Context(), r.PathValue("id"), wire.UpdateSandboxRequest{Env: change}); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}
