package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/httpjson"
	"github.com/sbxhq/sbx/wire"
)

// git in the toolbox: the agent runs each operation (go-git) and the API
// forwards it. Clone, push and pull reach a remote and may take long: the
// daemon waits for them up to their timeoutSeconds (the agent's default 300)
// and execTimeoutMargin more, never without a bound.

const gitDefaultTimeout = 300 * time.Second

// codesGit are the codes every git route can return.
var codesGit = []wire.Code{wire.CodeInvalidPath, wire.CodeInvalidParameter, wire.CodeInvalidTimeout, wire.CodeGitAuthFailed, wire.CodeGitBranchNotFound,
	wire.CodeGitConflict, wire.CodeGitFailed, wire.CodeGitNotARepository, wire.CodeGitRemoteNotFound, wire.CodeGitRemoteUnreachable}

// git forwards a git request to the sandbox's agent with a deadline.
func (s *Server) git(w http.ResponseWriter, r *http.Request) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, httpjson.MaxBody))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return errdefs.TooLarge(wire.CodeBodyTooLarge, "the request body is larger than %d bytes", httpjson.MaxBody)
	} else if err != nil {
		return errdefs.Invalid(wire.CodeInvalidJSON, "reading the request body: %v", err)
	}
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	timeout := gitDefaultTimeout
	var req struct{ TimeoutSeconds int }
	if json.Unmarshal(body, &req) == nil && req.TimeoutSeconds > 0 {
		timeout = time.Duration(req.TimeoutSeconds) * time.Second
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout+execTimeoutMargin)
	defer cancel()
	return s.proxy(w, r.WithContext(ctx))
}
