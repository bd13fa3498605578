package e2b

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"path"
	"strings"

	"connectrpc.com/connect"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/compat/e2b/envdpb/filesystempb/filesystempbconnect"
	"github.com/sbxhq/sbx/internal/compat/e2b/envdpb/processpb/processpbconnect"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// envd, E2B's in-sandbox daemon: the Connect-RPC services process.Process
// (process.go) and filesystem.Filesystem (filesystem.go), and the REST
// endpoints GET /health and GET/POST /files.

func (s *Server) envdHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle(processpbconnect.NewProcessHandler(&processService{s}))
	mux.Handle(filesystempbconnect.NewFilesystemHandler(&filesystemService{s}))
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		if err := s.box(r.Header).health(r.Context()); err != nil {
			writeHealthErr(w, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /files", s.getFile)
	mux.HandleFunc("POST /files", s.postFiles)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeEnvdError(w, http.StatusNotFound, "envd has no "+r.Method+" "+r.URL.Path)
	})
	return mux
}

// health answers nil when the sandbox runs and its agent answers; a
// sandbox that is not running is a 502, which the SDK's isRunning reads as
// false. It never starts or resumes the sandbox.
func (b box) health(ctx context.Context) error {
	sb, err := b.s.sandboxes.Get(ctx, b.id)
	if err != nil {
		return err
	}
	if sb.State != wire.StateStarted {
		return errNotRunning(sb)
	}
	client, _, err := b.s.sandboxes.Agent(ctx, sb.ID)
	if err == nil {
		_, err = agentapi.Call[agentapi.None](ctx, client, agentapi.Health, agentapi.Params{}, nil)
	}
	if err != nil {
		return &errdefs.Error{Kind: errdefs.KindUnavailable, Code: wire.CodeSandboxUnavailable, Message: "the sandbox's agent does not answer", Err: err}
	}
	return nil
}

func errNotRunning(sb *store.Sandbox) error {
	return errdefs.Unavailable(wire.CodeSandboxNotRunning, "sandbox %s is %s, not running", sb.ID, sb.State)
}

// writeHealthErr answers a failed health check: 502 when the sandbox is
// not running or its agent does not answer, as E2B's proxy does.
func writeHealthErr(w http.ResponseWriter, err error) {
	if errdefs.Is(err, errdefs.KindUnavailable) {
		var e *errdefs.Error
		errors.As(err, &e)
		writeEnvdError(w, http.StatusBadGateway, e.Message)
		return
	}
	writeEnvdErr(w, err)
}

func (s *Server) serveEnvd(w http.ResponseWriter, r *http.Request) { s.envd.ServeHTTP(w, r) }

// userOf is the account a request runs as: envd's Basic auth user name
// (the SDK's `user` option), default DefaultUser.
func userOf(h http.Header) string {
	if u, _, ok := (&http.Request{Header: h}).BasicAuth(); ok && u != "" {
		return u
	}
	return DefaultUser
}

// hasUser reports whether the request names its account (else DefaultUser).
func hasUser(h http.Header) bool {
	u, _, ok := (&http.Request{Header: h}).BasicAuth()
	return ok && u != ""
}

// homeOf is where a user's relative paths start.
func homeOf(user string) string {
	switch user {
	case "root", "0":
		return "/root"
	}
	return "/home/" + user
}

// absPath resolves an E2B path: relative paths start at the user's home.
func absPath(p, user string) string {
	if p == "" {
		return homeOf(user)
	}
	if !strings.HasPrefix(p, "/") {
		p = homeOf(user) + "/" + p
	}
	return path.Clean(p)
}

// mcpTokenPath is where getMcpToken reads the MCP gateway's token.
const mcpTokenPath = "/etc/mcp-gateway/.token"

func (s *Server) getFile(w http.ResponseWriter, r *http.Request) {
	b := s.box(r.Header)
	q := r.URL.Query()
	user := q.Get("username")
	if user == "" {
		user = userOf(r.Header)
	}
	p := absPath(q.Get("path"), user)
	resp, err := b.open(r.Context(), agentapi.GetFile, query("path", p), nil, "")
	if p == mcpTokenPath && errdefs.Is(err, errdefs.KindNotFound) {
		err = errdefs.Invalid(wire.CodeInvalidParameter, "getMcpToken: this sandbox runs no MCP gateway; sbx's E2B layer refuses create's mcp option")
	}
	if err != nil {
		writeEnvdErr(w, err)
		return
	}
	defer resp.Body.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	io.Copy(w, resp.Body)
}

// writeFile writes body to p as envd does, as user: the file and the
// directories the write makes are the user's (the agent runs as root). An
// image without DefaultUser, when the caller named no user, gets the file
// as root, as its commands run (process.go); the directory is made first
// to learn that before the body is sent.
func (b box) writeFile(ctx context.Context, p, user string, defaulted bool, body io.Reader) error {
	owner := user
	if defaulted {
		_, err := callAgent[wire.FileInfo](ctx, b, agentapi.MkdirOwned, query("path", path.Dir(p), "owner", user), nil)
		if errdefs.CodeOf(err) == wire.CodeUnknownUser {
			owner = "root"
		} else if err != nil {
			return err
		}
	}
	resp, err := b.open(ctx, agentapi.PutFileOwned, query("path", p, "owner", owner), body, "application/octet-stream")
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// entryJSON is envd's EntryInfo of POST /files.
type entryJSON struct {
	Path string `json:"path"`
	Name string `json:"name"`
	Type string `json:"type"`
}

// postFiles writes the body (octet-stream, path in the query) or each part
// of a multipart form (its file name is the path when the query has none).
func (s *Server) postFiles(w http.ResponseWriter, r *http.Request) {
	b := s.box(r.Header)
	q := r.URL.Query()
	user, defaulted := q.Get("username"), false
	if user == "" {
		user, defaulted = userOf(r.Header), !hasUser(r.Header)
	}
	var written []entryJSON
	put := func(p string, body io.Reader) error {
		if p == "" {
			return errdefs.Invalid(wire.CodeInvalidParameter, "no path: give ?path= or a file name in the form")
		}
		p = absPath(p, user)
		// The file and the directories the write makes are the user's, as
		// envd writes them (the agent itself runs as root).
		if err := b.writeFile(r.Context(), p, user, defaulted, body); err != nil {
			return err
		}
		written = append(written, entryJSON{Path: p, Name: path.Base(p), Type: "file"})
		return nil
	}
	var body io.Reader = r.Body
	switch enc := r.Header.Get("Content-Encoding"); enc {
	case "", "identity":
	case "gzip": // files.write(…, {gzip: true}): the file is what the gzip holds
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			writeEnvdErr(w, errdefs.Invalid(wire.CodeInvalidParameter, "the body is not gzip data (Content-Encoding: gzip): %v", err))
			return
		}
		defer zr.Close()
		body = zr
	default:
		writeEnvdErr(w, errdefs.Invalid(wire.CodeInvalidParameter, "Content-Encoding %q is not supported: send gzip or none", enc))
		return
	}
	mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt == "multipart/form-data" {
		mr := multipart.NewReader(body, params["boundary"])
		for {
			part, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				writeEnvdErr(w, errdefs.Invalid(wire.CodeInvalidParameter, "malformed multipart body: %v", err))
				return
			}
			p := q.Get("path")
			if p == "" {
				p = formFileName(part)
			}
			if err := put(p, part); err != nil {
				writeEnvdErr(w, err)
				return
			}
		}
	} else if err := put(q.Get("path"), body); err != nil {
		writeEnvdErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, written)
}

// formFileName is a form part's file name as sent: the SDK puts each file's
// whole path there, and multipart.Part.FileName would keep only its base.
func formFileName(part *multipart.Part) string {
	_, params, err := mime.ParseMediaType(part.Header.Get("Content-Disposition"))
	if err != nil {
		return ""
	}
	return params["filename"]
}

// writeEnvdErr answers an envd REST request with err as envd's
// {"code", "message"}; a missing file is 404 as the SDK expects.
func writeEnvdErr(w http.ResponseWriter, err error) {
	var e *errdefs.Error
	if !errors.As(err, &e) {
		writeEnvdError(w, http.StatusInternalServerError, "internal error; see the daemon log")
		return
	}
	writeAPIError(w, err)
}

func writeEnvdError(w http.ResponseWriter, status int, msg string) {
	raw, _ := json.Marshal(map[string]any{"code": status, "message": msg})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(raw)
}

// connectError maps an sbx error onto the Connect code the SDK expects
// (NotFound → SDK's NotFoundError, InvalidArgument → InvalidArgumentError, …).
func connectError(err error) error {
	var e *errdefs.Error
	if !errors.As(err, &e) {
		return connect.NewError(connect.CodeInternal, errors.New("internal error; see the daemon log"))
	}
	code := connect.CodeInternal
	switch e.Kind {
	case errdefs.KindInvalid, errdefs.KindTooLarge:
		code = connect.CodeInvalidArgument
	case errdefs.KindUnauthorized:
		code = connect.CodeUnauthenticated
	case errdefs.KindNotFound:
		code = connect.CodeNotFound
	case errdefs.KindConflict:
		code = connect.CodeAlreadyExists
	case errdefs.KindUnavailable:
		code = connect.CodeUnavailable
	case errdefs.KindDiskFull:
		code = connect.CodeResourceExhausted
	}
	return connect.NewError(code, errors.New(e.Message))
}
