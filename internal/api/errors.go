package api

import (
	"log/slog"
	"net/http"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/httpjson"
)

// writeError sends err in the API's error format; internal errors are logged
// in full and shown to the client by a generic message only.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	if httpjson.WriteError(w, err) == errdefs.KindInternal {
		slog.Error("request failed", "method", r.Method, "route", r.Pattern, "requestId", RequestID(r.Context()), "err", err)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) { httpjson.Write(w, status, v) }

func decodeJSON(w http.ResponseWriter, r *http.Request, v any) error { return httpjson.Decode(w, r, v) }
