package mcp

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sbxhq/sbx/internal/authz"
	"github.com/sbxhq/sbx/internal/httpjson"
	"github.com/sbxhq/sbx/sdk"
)

// Path is where `sbx serve` serves MCP over Streamable HTTP.
const Path = "/mcp"

// Where a verified request's TokenInfo keeps its API key and the daemon's
// URL as the caller reached it (preview URLs are made of it).
const (
	keyExtra  = "sbx.key"
	baseExtra = "sbx.base"
)

// Handler serves MCP over Streamable HTTP. A request must carry an API key
// as a bearer token that gate accepts (else 401); each tool call is then a
// request to api, the daemon's own API handler, with that key, so scopes,
// tenancy, rate limits and the audit log apply to it as to any API call
// (a revoked key fails its next request).
func Handler(gate *authz.Gate, api http.Handler) http.Handler {
	hc := &http.Client{Transport: inProcess{api}}
	srv := New(func(extra *gomcp.RequestExtra) (*sdk.Client, error) {
		if extra == nil || extra.TokenInfo == nil {
			return nil, errors.New("no API key on the request")
		}
		key, _ := extra.TokenInfo.Extra[keyExtra].(string)
		base, _ := extra.TokenInfo.Extra[baseExtra].(string)
		return sdk.NewClient(base, key, sdk.WithHTTPClient(hc)), nil
	}, Options{})
	// Stateless: the Go SDK serves protocol 2026-07-28 over HTTP only so;
	// 2025-11-25 clients still initialize and call as before. Nothing here
	// needs a session: every request carries its key. A 2026-07-28 client
	// cancels a call by closing its request, which cancels the tool's work.
	h := gomcp.NewStreamableHTTPHandler(func(*http.Request) *gomcp.Server { return srv },
		&gomcp.StreamableHTTPOptions{Stateless: true, PropagateRequestCancellation: true,
			// The SDK refuses a loopback connection naming another host,
			// against DNS rebinding of a local server without credentials.
			// Here every request needs a key, which a rebound page lacks,
			// and a reverse proxy in front of the daemon must get through.
			DisableLocalhostProtection: true})
	verify := func(ctx context.Context, key string, r *http.Request) (*auth.TokenInfo, error) {
		p, err := gate.Key(ctx, key)
		if err != nil {
			return nil, errors.Join(auth.ErrInvalidToken, err)
		}
		base := "http://" + r.Host
		if r.TLS != nil {
			base = "https://" + r.Host
		}
		return &auth.TokenInfo{UserID: p.KeyID, Extra: map[string]any{keyExtra: key, baseExtra: base}}, nil
	}
	return admitted(gate, auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h))
}

// admitted passes every /mcp request of a valid key through the gate as a
// read, so the request itself is rate-limited by its key (429 with
// Retry-After) and needs the read scope; the API requests its tool calls
// make are admitted again, each with its own scope and audit entry. A
// request without a valid key goes on to the SDK's 401, which carries
// the WWW-Authenticate header MCP clients read.
func admitted(gate *authz.Gate, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		p, err := gate.Key(r.Context(), key)
		if err != nil {
			next.ServeHTTP(w, r)
			return
		}
		w, r, end, err := gate.HTTP(w, r, p, authz.Read)
		defer end()
		if err != nil {
			httpjson.WriteError(w, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// inProcess is an http.RoundTripper that serves a request with an
// http.Handler in this process, streaming its answer.
type inProcess struct{ h http.Handler }

func (t inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	in := req.Clone(req.Context())
	in.RequestURI = req.URL.RequestURI()
	in.RemoteAddr = "127.0.0.1:0" // the MCP handler's own call
	if req.URL.Scheme == "https" {
		in.TLS = &tls.ConnectionState{} // the caller came over TLS
	}
	if in.Body == nil {
		in.Body = http.NoBody
	}
	pr, pw := io.Pipe()
	w := &pipeWriter{header: http.Header{}, pw: pw, ready: make(chan *http.Response, 1), req: req}
	go func() {
		defer func() {
			// As net/http does for a connection: a handler that aborts
			// (http.ErrAbortHandler, as a proxy whose reader went away)
			// or panics ends its answer, not the process.
			if p := recover(); p != nil {
				if p != http.ErrAbortHandler {
					slog.Error("mcp: an API handler panicked", "panic", p, "path", in.URL.Path)
				}
				w.writeHeader(http.StatusInternalServerError)
				pw.CloseWithError(fmt.Errorf("the API handler ended early: %v", p))
				return
			}
			w.writeHeader(http.StatusOK) // a handler that wrote nothing answered 200
			pw.Close()
		}()
		t.h.ServeHTTP(w, in)
	}()
	select {
	case resp := <-w.ready:
		resp.Body = pr
		return resp, nil
	case <-req.Context().Done():
		pr.CloseWithError(req.Context().Err())
		return nil, req.Context().Err()
	}
}

// pipeWriter is the handler's side of inProcess: the status and header go
// out on the first write, the body through the pipe.
type pipeWriter struct {
	header http.Header
	pw     *io.PipeWriter
	ready  chan *http.Response
	req    *http.Request
	once   sync.Once
}

func (w *pipeWriter) Header() http.Header { return w.header }

func (w *pipeWriter) WriteHeader(code int) { w.writeHeader(code) }

func (w *pipeWriter) writeHeader(code int) {
	w.once.Do(func() {
		w.ready <- &http.Response{
			Status: http.StatusText(code), StatusCode: code, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: w.header.Clone(), Request: w.req, ContentLength: -1,
		}
	})
}

func (w *pipeWriter) Write(p []byte) (int, error) {
	w.writeHeader(http.StatusOK)
	return w.pw.Write(p)
}

// Flush has nothing to do (the pipe hands each write on at once); the API
// flushes its streams through it.
func (w *pipeWriter) Flush() {}
