package daytona

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/httpjson"
	"github.com/sbxhq/sbx/wire"
)

// Some Daytona operations are sbx API routes under another shape (image
// builds and deletes, volumes, stats, egress). The layer serves them by
// calling that route in process, as the caller — their key, scope, team
// and audit — so there is one implementation of each.

// recorder is the answer of a route called in process.
type recorder struct {
	status int
	header http.Header
	body   bytes.Buffer
}

func (w *recorder) Header() http.Header         { return w.header }
func (w *recorder) Write(b []byte) (int, error) { return w.body.Write(b) }
func (w *recorder) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}
func (w *recorder) Flush() {}

// native calls sbx's route method path (escaped) with body, as the caller of
// r, and returns its answer; an error answer is returned as its error.
func (h *Handler) native(r *http.Request, method, path string, query url.Values, body io.Reader, contentType string) (*recorder, error) {
	if h.cfg.API == nil {
		return nil, errdefs.Unavailable(wire.CodeInternal, "sbx's API is not mounted beside the Daytona layer")
	}
	if body == nil {
		body = http.NoBody
	}
	req, err := http.NewRequestWithContext(r.Context(), method, path, body)
	if err != nil {
		return nil, errdefs.Internal(err, "call %s %s", method, path)
	}
	req.URL.RawQuery = query.Encode()
	req.Host, req.RemoteAddr, req.TLS = r.Host, r.RemoteAddr, r.TLS
	req.Header.Set("Authorization", r.Header.Get("Authorization"))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	rec := &recorder{header: http.Header{}}
	h.cfg.API.ServeHTTP(rec, req)
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	if rec.status >= 400 {
		var e wire.ErrorResponse
		if json.Unmarshal(rec.body.Bytes(), &e) != nil || e.Error.Code == "" {
			return nil, errdefs.Internal(nil, "%s %s answered %d", method, path, rec.status)
		}
		return nil, &errdefs.Error{Kind: httpjson.KindOf(rec.status), Code: e.Error.Code, Message: e.Error.Message}
	}
	return rec, nil
}

// nativeJSON calls a JSON route: in (nil: no body) out, out (nil: not read).
func (h *Handler) nativeJSON(r *http.Request, method, path string, query url.Values, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return errdefs.Internal(err, "encode %s %s", method, path)
		}
		body = bytes.NewReader(b)
	}
	rec, err := h.native(r, method, path, query, body, "application/json")
	if err != nil || out == nil {
		return err
	}
	if err := json.Unmarshal(rec.body.Bytes(), out); err != nil {
		return errdefs.Internal(err, "decode the answer of %s %s", method, path)
	}
	return nil
}
