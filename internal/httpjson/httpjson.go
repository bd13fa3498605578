// Package httpjson holds the JSON conventions shared by the daemon's API and
// the in-sandbox agent: strict request decoding, the error body and the one
// table from error kinds to HTTP statuses.
package httpjson

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// MaxBody bounds every JSON request body.
const MaxBody = 1 << 20

var statusOf = map[errdefs.Kind]int{
	errdefs.KindInternal:     http.StatusInternalServerError,
	errdefs.KindInvalid:      http.StatusBadRequest,
	errdefs.KindUnauthorized: http.StatusUnauthorized,
	errdefs.KindNotFound:     http.StatusNotFound,
	errdefs.KindConflict:     http.StatusConflict,
	errdefs.KindTooLarge:     http.StatusRequestEntityTooLarge,
	errdefs.KindUnavailable:  http.StatusServiceUnavailable,
	errdefs.KindDiskFull:     http.StatusInsufficientStorage,
	errdefs.KindForbidden:    http.StatusForbidden,
	errdefs.KindRateLimited:  http.StatusTooManyRequests,
}

// Status returns the HTTP status of an error kind.
func Status(k errdefs.Kind) int { return statusOf[k] }

// KindOf returns the error kind of an HTTP status (the inverse of Status);
// statuses the table lacks are internal.
func KindOf(status int) errdefs.Kind {
	for k, s := range statusOf {
		if s == status {
			return k
		}
	}
	return errdefs.KindInternal
}

// Write sends v as JSON with status.
func Write(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		WriteError(w, err)
		return
	}
	body = append(body, '\n')
	// With its length the response is whole once written: a handler that
	// flushes and then drops the connection (the agent's suspend) loses
	// nothing.
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}

// WriteError sends err as {"error": {...}} with the status of its kind and
// returns that kind. Errors that are not *errdefs.Error are internal: the
// client sees a generic message, the caller should log the error.
func WriteError(w http.ResponseWriter, err error) errdefs.Kind {
	body := wire.ErrorBody{Code: wire.CodeInternal, Message: "internal error; see the daemon log"}
	kind := errdefs.KindInternal
	var e *errdefs.Error
	if errors.As(err, &e) {
		kind = e.Kind
		body = wire.ErrorBody{Code: e.Code, Message: e.Message}
	}
	if kind == errdefs.KindUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	Write(w, Status(kind), wire.ErrorResponse{Error: body})
	return kind
}

// Decode reads one JSON object into v, strictly: unknown fields, trailing
// data, wrong types and oversized bodies are errors that name the problem.
// An empty body leaves v as it is.
func Decode(w http.ResponseWriter, r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, MaxBody))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == io.EOF {
		return nil
	}
	if err == nil {
		if _, terr := dec.Token(); terr != io.EOF {
			return errdefs.Invalid(wire.CodeInvalidJSON, "the request body must hold exactly one JSON object")
		}
		return nil
	}
	var (
		maxErr  *http.MaxBytesError
		synErr  *json.SyntaxError
		typeErr *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &maxErr):
		return errdefs.TooLarge(wire.CodeBodyTooLarge, "the request body is larger than %d bytes", MaxBody)
	case errors.As(err, &synErr):
		return errdefs.Invalid(wire.CodeInvalidJSON, "malformed JSON at byte %d: %v", synErr.Offset, synErr)
	case errors.As(err, &typeErr):
		if typeErr.Field == "" {
			return errdefs.Invalid(wire.CodeInvalidJSON, "the request body must be a JSON object")
		}
		return errdefs.Invalid(wire.CodeInvalidJSON, "field %q has the wrong type: got JSON %s", typeErr.Field, typeErr.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return errdefs.Invalid(wire.CodeUnknownField, "unknown field %s in the request body", strings.TrimPrefix(err.Error(), "json: unknown field "))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errdefs.Invalid(wire.CodeInvalidJSON, "the request body ends in the middle of a JSON value")
	default:
		return errdefs.Invalid(wire.CodeInvalidJSON, "invalid JSON: %v", err)
	}
}

// BoolParam reads an optional true/false query parameter; absent is false.
func BoolParam(r *http.Request, name string) (bool, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, errdefs.Invalid(wire.CodeInvalidParameter, "query parameter %s must be true or false, got %q", name, v)
	}
	return b, nil
}
