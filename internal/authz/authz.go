// Package authz is the one way in for every surface: the native API, the
// Daytona and E2B layers (REST, socket.io, envd), previews, SSH, the
// dashboard and /metrics. Each request or operation takes the same steps:
//
//	credential → principal → scope check for the operation → per-key rate limit → audit entry (writes)
//
// A surface may translate its own credential (an envd token, an SSH access,
// a dashboard session, a preview token) into a principal, then calls Admit
// (or HTTP) with the Op it is about to perform. Adding a surface or a
// route is one decision per operation: its Op.
package authz

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/httpjson"
	"github.com/sbxhq/sbx/wire"
)

// Op is one operation of a surface.
type Op struct {
	// Method and Path name it in the audit log: an HTTP method and path,
	// or the surface's verb and a path-like name for what is not HTTP
	// ("SOCKETIO /daytona/…/socket.io#subscribe", "SSH session/sbx-…").
	Method, Path string
	// Scope is what the key must hold; "" needs admin (fail closed).
	Scope auth.Scope
	// Write: the operation changes something and is audited.
	Write bool
}

// The decisions most operations take, one per route or event:
var (
	Read     = Op{Scope: auth.ScopeSandboxesRead}               // looks at sandboxes
	Write    = Op{Scope: auth.ScopeSandboxesWrite, Write: true} // creates, changes or deletes them
	Exec     = Op{Scope: auth.ScopeExec, Write: true}           // runs code or changes files inside one
	ExecRead = Op{Scope: auth.ScopeExec}                        // reads files or processes inside one
	Admin    = Op{Scope: auth.ScopeAdmin, Write: true}          // administers keys and teams
	Metrics  = Op{Scope: auth.ScopeMetricsRead}                 // reads /metrics
)

// At is op performed as method on path (its name in the audit log).
func (op Op) At(method, path string) Op {
	op.Method, op.Path = method, path
	return op
}

// Gate runs the steps. The zero parts turn a step off: nil Limits limits
// nothing, nil Audit keeps no log (a daemon always has both).
type Gate struct {
	Keys   auth.Authenticator
	Limits *auth.RateLimits
	Audit  *AuditLog
	// RequestID names the request an operation belongs to in its audit
	// entry (the API's X-Request-Id); nil: none.
	RequestID func(context.Context) string
	// Forwarders are the client certificate names (the cluster gateway's)
	// whose requests may say whose they are (forwarded.go); nil: nobody's.
	Forwarders []string
}

// Key turns an API key into its principal; "" is refused.
func (g *Gate) Key(ctx context.Context, key string) (auth.Principal, error) {
	if key == "" {
		return auth.Principal{}, errdefs.Unauthorized(wire.CodeUnauthorized, "missing API key")
	}
	return g.Keys.Authenticate(ctx, key)
}

// Done records how an admitted operation ended (nil: it succeeded). Calling
// it for a read does nothing; it is safe to call more than once (only the
// first counts).
type Done func(err error)

// Admit lets p perform op: p must hold op's scope and be within its key's
// rate limit. A write is audited: the returned Done records its end, and a
// write refused for want of a scope is recorded at once.
func (g *Gate) Admit(ctx context.Context, p auth.Principal, op Op) (Done, error) {
	record := g.recorder(ctx, p, op)
	if !Allowed(p, op.Scope) {
		err := MissingScope(op.Scope)
		record(httpjson.Status(errdefs.KindOf(err)), errdefs.CodeOf(err))
		return func(error) {}, err
	}
	if admitted, _ := onBehalf(ctx, p); p.KeyID != auth.Admin.KeyID && !admitted {
		if _, err := g.Limits.Allow(p.KeyID); err != nil {
			return func(error) {}, err
		}
	}
	return func(err error) {
		if err == nil {
			record(http.StatusOK, "")
			return
		}
		record(httpjson.Status(errdefs.KindOf(err)), errdefs.CodeOf(err))
	}, nil
}

// admission is what the gate puts in the context of a request it admitted:
// a request a surface then makes in process on its behalf (Daytona's layer
// calling sbx's own routes, internal/compat/daytona/native.go; MCP's tools)
// carries it, so the caller's one request is counted once against its key's
// rate limit and, if it was a write, audited once. Its scope is checked
// again all the same.
type admission struct {
	keyID   string
	audited bool
}

type admissionKey struct{}

// onBehalf reports whether ctx is of a request made in process for one of
// p's that the gate admitted, and whether that one is audited.
func onBehalf(ctx context.Context, p auth.Principal) (admitted, audited bool) {
	a, ok := ctx.Value(admissionKey{}).(admission)
	if !ok || a.keyID != p.KeyID {
		return false, false
	}
	return true, a.audited
}

// recorder returns what writes op's audit entry once; a no-op for reads and
// for what an audited request does in process.
func (g *Gate) recorder(ctx context.Context, p auth.Principal, op Op) func(status int, code wire.Code) {
	if _, audited := onBehalf(ctx, p); !op.Write || g.Audit == nil || audited {
		return func(int, wire.Code) {}
	}
	done := false
	return func(status int, code wire.Code) {
		if done {
			return
		}
		done = true
		e := wire.AuditEntry{Time: time.Now().UTC(), KeyID: p.KeyID, Team: p.Team, Method: op.Method, Path: op.Path, Status: status, Code: code}
		if g.RequestID != nil {
			e.RequestID = g.RequestID(ctx)
		}
		g.Audit.Append(e)
	}
}

// HTTP admits request r of p as op. On success it returns the writer and
// request the handler must use (the principal in the context) and end, to
// call once the handler has answered: a write's entry takes the answer's
// status and error code. On a refusal it returns the error to answer with
// and sets Retry-After for a rate limit; end records a refused write.
//
// op without Method and Path is named by r's.
func (g *Gate) HTTP(w http.ResponseWriter, r *http.Request, p auth.Principal, op Op) (http.ResponseWriter, *http.Request, func(), error) {
	if op.Method == "" && op.Path == "" {
		op = op.At(r.Method, r.URL.Path)
	}
	record := g.recorder(r.Context(), p, op)
	var aw *auditWriter
	if op.Write && g.Audit != nil {
		aw = &auditWriter{ResponseWriter: w}
		w = aw
	}
	end := func() {
		if aw != nil {
			record(aw.status(), aw.errCode())
		}
	}
	if !Allowed(p, op.Scope) {
		return w, r, end, MissingScope(op.Scope)
	}
	admitted, audited := onBehalf(r.Context(), p)
	if p.KeyID != auth.Admin.KeyID && !admitted {
		if wait, err := g.Limits.Allow(p.KeyID); err != nil {
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
			return w, r, func() {}, err
		}
	}
	ctx := context.WithValue(r.Context(), admissionKey{}, admission{keyID: p.KeyID, audited: audited || aw != nil})
	return w, r.WithContext(auth.WithPrincipal(ctx, p)), end, nil
}

// Allowed reports whether p may perform an operation that needs scope.
// An operation without a scope (one added without deciding) needs admin.
func Allowed(p auth.Principal, scope auth.Scope) bool {
	if scope == "" {
		scope = auth.ScopeAdmin
	}
	return p.Has(scope)
}

// MissingScope is the error for a key without scope.
func MissingScope(scope auth.Scope) error {
	if scope == "" {
		scope = auth.ScopeAdmin
	}
	return errdefs.Forbidden(wire.CodeMissingScope, "this API key lacks the scope %q that this request needs; make a key with it (sbx key create --scope %s)", scope, scope)
}
