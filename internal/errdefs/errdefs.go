// Package errdefs defines the kinds of error sbx returns and one error type that
// carries a kind, a stable machine-readable code and a message for the user.
//
// Every layer returns *Error (or wraps one) for anything the caller can act on;
// the API maps Kind to an HTTP status in one table. Any other error is internal.
package errdefs

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"github.com/sbxhq/sbx/wire"
)

// Kind classifies an error by what the caller should do about it.
type Kind int

const (
	KindInternal     Kind = iota // a bug or a host fault: 500
	KindInvalid                  // bad input: 400
	KindUnauthorized             // missing or wrong API key: 401
	KindNotFound                 // the named thing does not exist: 404
	KindConflict                 // the thing exists or is in the wrong state: 409
	KindTooLarge                 // the request body is too large: 413
	KindUnavailable              // try again later: 503
	KindDiskFull                 // a disk is full; free space first: 507
	KindForbidden                // the key lacks a scope, or a quota is reached: 403
	KindRateLimited              // too many requests with this key; retry later: 429
)

// Error is an error with a kind, a code such as wire.CodeSandboxNotFound and a message
// that tells the user what went wrong and, where possible, what to do.
type Error struct {
	Kind    Kind
	Code    wire.Code
	Message string
	Err     error // optional cause, not shown to API clients
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

func newf(k Kind, code wire.Code, format string, args ...any) error {
	return &Error{Kind: k, Code: code, Message: fmt.Sprintf(format, args...)}
}

// Invalid reports bad input.
func Invalid(code wire.Code, format string, args ...any) error {
	return newf(KindInvalid, code, format, args...)
}

// NotFound reports that something does not exist.
func NotFound(code wire.Code, format string, args ...any) error {
	return newf(KindNotFound, code, format, args...)
}

// Conflict reports a clash with existing state.
func Conflict(code wire.Code, format string, args ...any) error {
	return newf(KindConflict, code, format, args...)
}

// Unavailable reports a condition that may pass; the caller may retry.
func Unavailable(code wire.Code, format string, args ...any) error {
	return newf(KindUnavailable, code, format, args...)
}

// DiskFull reports that a disk is full or below its reserve: the caller must
// free space (delete sandboxes, snapshots, images or files) and try again.
func DiskFull(code wire.Code, format string, args ...any) error {
	return newf(KindDiskFull, code, format, args...)
}

// Unauthorized reports a missing or wrong credential.
func Unauthorized(code wire.Code, format string, args ...any) error {
	return newf(KindUnauthorized, code, format, args...)
}

// Forbidden reports a request the key may not make (a missing scope) or a
// team may not make now (a quota).
func Forbidden(code wire.Code, format string, args ...any) error {
	return newf(KindForbidden, code, format, args...)
}

// RateLimited reports a key over its request rate.
func RateLimited(code wire.Code, format string, args ...any) error {
	return newf(KindRateLimited, code, format, args...)
}

// TooLarge reports a request body over its limit.
func TooLarge(code wire.Code, format string, args ...any) error {
	return newf(KindTooLarge, code, format, args...)
}

// Internal wraps an unexpected error with context for the log; the API shows
// clients only the message.
func Internal(err error, format string, args ...any) error {
	return &Error{Kind: KindInternal, Code: wire.CodeInternal, Message: fmt.Sprintf(format, args...), Err: err}
}

// KindOf returns the kind of the first *Error in err's chain, or KindInternal.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindInternal
}

// Is reports whether err's chain holds an *Error of kind k.
func Is(err error, k Kind) bool { return err != nil && KindOf(err) == k }

// CodeOf returns the code of the first *Error in err's chain, or "INTERNAL".
func CodeOf(err error) wire.Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return wire.CodeInternal
}

// FS is err, from a file operation on path, as the kind and code the API
// reports (a missing file is FILE_NOT_FOUND, a full disk NO_SPACE, …).
func FS(err error, path string) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return NotFound(wire.CodeFileNotFound, "%s: no such file or directory", path)
	case errors.Is(err, syscall.ENOTDIR):
		return Invalid(wire.CodeNotADirectory, "%s: a parent is not a directory", path)
	case errors.Is(err, syscall.EISDIR):
		return Conflict(wire.CodeIsADirectory, "%s is a directory", path)
	case errors.Is(err, syscall.EEXIST):
		return Conflict(wire.CodeFileExists, "%s already exists", path)
	case errors.Is(err, syscall.ENOTEMPTY):
		return Conflict(wire.CodeDirNotEmpty, "%s is a directory that is not empty", path)
	case errors.Is(err, syscall.EBUSY):
		return Conflict(wire.CodeBusy, "%s is in use (a mount point?)", path)
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return Invalid(wire.CodePermissionDenied, "%s: permission denied", path)
	case errors.Is(err, syscall.EROFS):
		return Invalid(wire.CodeReadOnlyFilesystem, "%s is on a read-only filesystem", path)
	case errors.Is(err, syscall.ENAMETOOLONG), errors.Is(err, syscall.ELOOP):
		return Invalid(wire.CodeInvalidPath, "%s: name too long or too many levels of symlinks", path)
	case errors.Is(err, syscall.EXDEV):
		return Invalid(wire.CodeCrossDevice, "%s: cannot move across filesystems", path)
	case errors.Is(err, syscall.ENXIO), errors.Is(err, syscall.ENODEV):
		// open(2) of a socket, or of a device with no driver.
		return Invalid(wire.CodeNotARegularFile, "%s is not a regular file", path)
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return DiskFull(wire.CodeNoSpace, "no space left for %s", path)
	}
	return Internal(err, "%s: file operation failed", path)
}
