package e2b

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"path"
	"strings"

	"connectrpc.com/connect"

	"github.com/sbxhq/sbx/internal/compat/e2b/envdpb/filesystempb/filesystempbconnect"
	"github.com/sbxhq/sbx/internal/compat/e2b/envdpb/processpb/processpbconnect"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/sdk"
)

// envd, E2B's in-sandbox daemon: the Connect-RPC services process.Process
// (process.go) and filesystem.Filesystem (filesystem.go), and the REST
// endpoints GET /health and GET/POST /files.

func (s *Server) envdHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle(processpbconnect.NewProcessHandler(&processService{s}))
	mux.Handle(filesystempbconnect.NewFilesystemHandler(&filesystemService{s}))
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		if _, err := s.sandboxes.Get(r.Context(), sandboxOf(r.Context())); err != nil {
			writeEnvdErr(w, err)
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

func (s *Server) serveEnvd(w http.ResponseWriter, r *http.Request) { s.envd.ServeHTTP(w, r) }

// userOf is the account a request runs as: envd's Basic auth user name
// (the SDK's `user` option), default DefaultUser.
func userOf(h http.Header) string {
	if u, _, ok := (&http.Request{Header: h}).BasicAuth(); ok && u != "" {
		return u
	}
	return DefaultUser
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

func (s *Server) getFile(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	user := q.Get("username")
	if user == "" {
		user = userOf(r.Header)
	}
	resp, err := s.do(r.Context(), agentCall{method: "GET", path: "/files", query: url.Values{"path": {absPath(q.Get("path"), user)}}})
	if err != nil {
		writeEnvdErr(w, err)
		return
	}
	defer resp.Body.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	io.Copy(w, resp.Body)
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
	q := r.URL.Query()
	user := q.Get("username")
	if user == "" {
		user = userOf(r.Header)
	}
	var written []entryJSON
	put := func(p string, body io.Reader) error {
		if p == "" {
			return errdefs.Invalid(sdk.CodeInvalidParameter, "no path: give ?path= or a file name in the form")
		}
		p = absPath(p, user)
		s.prepareWrite(r.Context(), user, p) // owner.go
		if err := s.doJSON(r.Context(), agentCall{method: "PUT", path: "/files", query: url.Values{"path": {p}}, body: body, contentType: "application/octet-stream"}, nil); err != nil {
			return err
		}
		s.handOver(r.Context(), user, p)
		written = append(written, entryJSON{Path: p, Name: path.Base(p), Type: "file"})
		return nil
	}
	mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt == "multipart/form-data" {
		mr := multipart.NewReader(r.Body, params["boundary"])
		for {
			part, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				writeEnvdErr(w, errdefs.Invalid(sdk.CodeInvalidParameter, "malformed multipart body: %v", err))
				return
			}
			p := q.Get("path")
			if p == "" {
				p = part.FileName()
			}
			if err := put(p, part); err != nil {
				writeEnvdErr(w, err)
				return
			}
		}
	} else if err := put(q.Get("path"), r.Body); err != nil {
		writeEnvdErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, written)
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
