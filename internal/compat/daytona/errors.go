package daytona

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/httpjson"
	"github.com/sbxhq/sbx/wire"
)

// Daytona's error sources: the SDK picks an error class by source and code
// (DaytonaFileNotFoundError for DAYTONA_DAEMON|FILE_NOT_FOUND), else by status.
const (
	sourceAPI    = "DAYTONA_API"
	sourceDaemon = "DAYTONA_DAEMON"
)

// errorBody is Daytona's error response, the shape the SDK reads
// (message, code, source; statusCode and error as its server sends them).
type errorBody struct {
	StatusCode int    `json:"statusCode"`
	Message    string `json:"message"`
	Error      string `json:"error"`
	Code       string `json:"code,omitempty"`
	Source     string `json:"source"`
	Timestamp  string `json:"timestamp,omitempty"`
	Path       string `json:"path,omitempty"`
}

// daemonCodes are sbx codes the SDK knows as toolbox (daemon) codes under
// another name; the rest pass as they are.
var daemonCodes = map[wire.Code]string{
	wire.CodeFileNotFound:         "FILE_NOT_FOUND",
	wire.CodeProcessNotFound:      "PROCESS_NOT_FOUND",
	wire.CodeGitNotARepository:    "GIT_REPO_NOT_FOUND",
	wire.CodeGitRemoteUnreachable: "GIT_TRANSPORT_FAILED",
}

// statusError gives an error a status that sbx's error kinds lack (408).
type statusError struct {
	status int
	error
}

func (e statusError) Unwrap() error { return e.error }

// withStatus answers err with status instead of its kind's.
func withStatus(status int, err error) error { return statusError{status, err} }

// toDaytona turns an sbx error into Daytona's status and body. Toolbox
// errors come from the daemon; the rest from the API.
func toDaytona(err error, path string) (int, errorBody) {
	status := httpjson.Status(errdefs.KindOf(err))
	var se statusError
	if errors.As(err, &se) {
		status = se.status
	}
	if status == 0 {
		status = http.StatusInternalServerError
	}
	msg := err.Error()
	var e *errdefs.Error
	if errors.As(err, &e) {
		msg = e.Message
	}
	code := string(errdefs.CodeOf(err))
	if code == "" {
		code = string(wire.CodeInternal)
	}
	source := sourceAPI
	if strings.HasPrefix(path, toolboxPrefix) {
		source = sourceDaemon
		if c, ok := daemonCodes[wire.Code(code)]; ok {
			code = c
		}
	}
	// An INSUFFICIENT_STORAGE (507) or 413 is a status the SDK has no class
	// for; keep it, the SDK falls back to DaytonaError with the message.
	return status, errorBody{StatusCode: status, Message: msg, Error: http.StatusText(status), Code: code, Source: source, Path: path}
}

func writeError(w http.ResponseWriter, r *http.Request, err error) {
	status, body := toDaytona(err, r.URL.Path)
	if status >= 500 {
		logErr("request failed", "method", r.Method, "path", r.URL.Path, "status", status, "err", err)
	}
	writeJSON(w, status, body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// invalid is a Daytona 400 with an sbx code.
func invalid(code wire.Code, format string, args ...any) error {
	return errdefs.Invalid(code, format, args...)
}
