package daytona

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/wire"
)

// fileInfo is Daytona's FileInfo.
type fileInfo struct {
	Name        string `json:"name"`
	Path        string `json:"path"`
	IsDir       bool   `json:"isDir"`
	Size        int64  `json:"size"`
	Mode        string `json:"mode"`        // like Go's fs.FileMode: "-rw-r--r--"
	Permissions string `json:"permissions"` // octal: "0644"
	ModTime     string `json:"modTime"`
	ModifiedAt  string `json:"modifiedAt"`
	Owner       string `json:"owner"`
	Group       string `json:"group"`
}

func toFileInfo(f wire.FileInfo) fileInfo {
	perm, _ := strconv.ParseUint(f.Mode, 8, 32)
	mode := fs.FileMode(perm)
	switch f.Type {
	case "dir":
		mode |= fs.ModeDir
	case "symlink":
		mode |= fs.ModeSymlink
	}
	t := stamp(f.ModTime)
	return fileInfo{Name: f.Name, Path: f.Path, IsDir: f.Type == "dir", Size: f.Size, Mode: mode.String(),
		Permissions: f.Mode, ModTime: t, ModifiedAt: t, Owner: f.Owner, Group: f.Group}
}

func pathParam(r *http.Request) (string, error) {
	p := r.URL.Query().Get("path")
	if p == "" {
		return "", invalid(wire.CodeInvalidPath, "path is required")
	}
	return p, nil
}

// pathAgent returns the required path query parameter and the agent of the
// request's sandbox, the path checked first.
func (h *Handler) pathAgent(r *http.Request) (string, *agentapi.Client, error) {
	p, err := pathParam(r)
	if err != nil {
		return "", nil, err
	}
	c, _, err := h.agentFor(r)
	return p, c, err
}

func (h *Handler) listFiles(w http.ResponseWriter, r *http.Request) error {
	q := url.Values{"path": {r.URL.Query().Get("path")}}
	if q.Get("path") == "" {
		q.Set("path", ".")
	}
	if d := r.URL.Query().Get("depth"); d != "" {
		q.Set("depth", d)
	}
	c, _, err := h.agentFor(r)
	if err != nil {
		return err
	}
	list, err := agentapi.Call[[]wire.FileInfo](r.Context(), c, agentapi.ListFiles, query(q), nil)
	if err != nil {
		return err
	}
	out := make([]fileInfo, 0, len(list))
	for _, f := range list {
		out = append(out, toFileInfo(f))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (h *Handler) fileInfo(w http.ResponseWriter, r *http.Request) error {
	p, c, err := h.pathAgent(r)
	if err != nil {
		return err
	}
	f, err := agentapi.Call[wire.FileInfo](r.Context(), c, agentapi.StatFile, query(url.Values{"path": {p}}), nil)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toFileInfo(f))
	return nil
}

func (h *Handler) createFolder(w http.ResponseWriter, r *http.Request) error {
	p, err := pathParam(r)
	if err != nil {
		return err
	}
	mode := r.URL.Query().Get("mode")
	if mode != "" {
		if _, err := strconv.ParseUint(mode, 8, 32); err != nil {
			return invalid(wire.CodeInvalidMode, "mode must be octal permission bits like 755, got %q", mode)
		}
		mode = "0" + strings.TrimLeft(mode, "0")
	}
	c, _, err := h.agentFor(r)
	if err != nil {
		return err
	}
	if _, err := agentapi.Call[none](r.Context(), c, agentapi.Mkdir, agentapi.Params{}, wire.MkdirRequest{Path: p, Mode: mode, Parents: true}); err != nil {
		return err
	}
	w.WriteHeader(http.StatusCreated)
	return nil
}

func (h *Handler) deleteFile(w http.ResponseWriter, r *http.Request) error {
	p, c, err := h.pathAgent(r)
	if err != nil {
		return err
	}
	q := url.Values{"path": {p}}
	if r.URL.Query().Get("recursive") == "true" {
		q.Set("recursive", "true")
	}
	if _, err := agentapi.Call[none](r.Context(), c, agentapi.DeleteFile, query(q), nil); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (h *Handler) moveFile(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	from, to := q.Get("source"), q.Get("destination")
	if from == "" || to == "" {
		return invalid(wire.CodeInvalidPath, "source and destination are required")
	}
	c, _, err := h.agentFor(r)
	if err != nil {
		return err
	}
	if _, err := agentapi.Call[none](r.Context(), c, agentapi.Move, agentapi.Params{}, wire.MoveRequest{From: from, To: to}); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

// downloadFile serves GET /files/download?path: the file's bytes.
func (h *Handler) downloadFile(w http.ResponseWriter, r *http.Request) error {
	p, c, err := h.pathAgent(r)
	if err != nil {
		return err
	}
	body, err := getFile(r, c, p)
	if err != nil {
		return err
	}
	defer body.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	io.Copy(w, body)
	return nil
}

// getFile opens a file of the sandbox as a stream.
func getFile(r *http.Request, c *agentapi.Client, path string) (io.ReadCloser, error) {
	resp, err := agentapi.Open(r.Context(), c, agentapi.GetFile, query(url.Values{"path": {path}}), nil, "")
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// putFile writes body to path in the sandbox, creating parent directories.
func putFile(r *http.Request, c *agentapi.Client, path string, body io.Reader) error {
	resp, err := agentapi.Open(r.Context(), c, agentapi.PutFile, query(url.Values{"path": {path}, "parents": {"true"}}), body, "application/octet-stream")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return nil
}

// bulkDownload serves POST /files/bulk-download {paths}: a multipart answer
// with one "file" part per file, named by its path, or an "error" part with
// Daytona's error body for a file that could not be read.
func (h *Handler) bulkDownload(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Paths []string `json:"paths"`
	}
	if err := decode(w, r, &in); err != nil {
		return err
	}
	if len(in.Paths) == 0 {
		return invalid(wire.CodeInvalidPath, "paths is required: the files to download")
	}
	c, _, err := h.agentFor(r)
	if err != nil {
		return err
	}
	mw := multipart.NewWriter(w)
	w.Header().Set("Content-Type", mw.FormDataContentType())
	w.WriteHeader(http.StatusOK)
	for _, p := range in.Paths {
		body, err := getFile(r, c, p)
		if err != nil {
			status, eb := toDaytona(err, toolboxPrefix)
			eb.StatusCode = status
			part, perr := mw.CreatePart(partHeader("error", p, "application/json"))
			if perr != nil {
				return nil // the client went away
			}
			json.NewEncoder(part).Encode(eb)
			continue
		}
		part, perr := mw.CreatePart(partHeader("file", p, "application/octet-stream"))
		if perr == nil {
			_, perr = io.Copy(part, body)
		}
		body.Close()
		if perr != nil {
			return nil // the answer is under way: a broken copy ends it
		}
	}
	mw.Close()
	return nil
}

func partHeader(field, filename, contentType string) textproto.MIMEHeader {
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q; filename=%q`, field, filename))
	h.Set("Content-Type", contentType)
	return h
}

// bulkUpload serves POST /files/bulk-upload: multipart fields
// files[i].path then files[i].file, streamed to the agent one by one.
func (h *Handler) bulkUpload(w http.ResponseWriter, r *http.Request) error {
	mr, err := r.MultipartReader()
	if err != nil {
		return invalid(wire.CodeInvalidParameter, "the body must be multipart/form-data with files[i].path and files[i].file: %v", err)
	}
	c, _, err := h.agentFor(r)
	if err != nil {
		return err
	}
	paths := map[string]string{} // "files[i]" → path
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return invalid(wire.CodeInvalidParameter, "reading the multipart body: %v", err)
		}
		name := part.FormName()
		idx, field, ok := strings.Cut(name, ".")
		if !ok || !strings.HasPrefix(idx, "files[") {
			part.Close()
			continue
		}
		switch field {
		case "path":
			b, err := io.ReadAll(io.LimitReader(part, 4096))
			if err != nil {
				return invalid(wire.CodeInvalidParameter, "reading %s: %v", name, err)
			}
			paths[idx] = string(b)
		case "file":
			dst := paths[idx]
			if dst == "" {
				dst = part.FileName() // the SDK names the file part by its destination too
			}
			if dst == "" {
				return invalid(wire.CodeInvalidPath, "%s came without %s.path", name, idx)
			}
			if err := putFile(r, c, dst, part); err != nil {
				return err
			}
		}
		part.Close()
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

// setPermissions serves POST /files/permissions?path&owner&group&mode,
// done by the agent.
func (h *Handler) setPermissions(w http.ResponseWriter, r *http.Request) error {
	p, err := pathParam(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	req := wire.PermissionsRequest{Path: p, Mode: q.Get("mode"), Owner: q.Get("owner"), Group: q.Get("group")}
	if req.Mode != "" {
		if _, err := strconv.ParseUint(req.Mode, 8, 32); err != nil {
			return invalid(wire.CodeInvalidMode, "mode must be octal permission bits like 755, got %q", req.Mode)
		}
	}
	c, _, err := h.agentFor(r)
	if err != nil {
		return err
	}
	if _, err := agentapi.Call[none](r.Context(), c, agentapi.SetPermissions, agentapi.Params{}, req); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

// findInFiles serves GET /files/find?path&pattern: the lines containing
// pattern, found by the agent.
func (h *Handler) findInFiles(w http.ResponseWriter, r *http.Request) error {
	p, c, pattern, err := h.searchParams(r)
	if err != nil {
		return err
	}
	res, err := agentapi.Call[wire.GrepResult](r.Context(), c, agentapi.Grep, agentapi.Params{}, wire.GrepRequest{Path: p, Pattern: pattern})
	if err != nil {
		return err
	}
	if res.Truncated {
		return invalid(wire.CodeInvalidParameter, "more than %d lines under %s contain %q: search a narrower path or pattern", agentapi.MaxGrepMatches, p, pattern)
	}
	writeJSON(w, http.StatusOK, res.Matches)
	return nil
}

// searchFiles serves GET /files/search?path&pattern: the files whose name
// matches a glob, found by the agent.
func (h *Handler) searchFiles(w http.ResponseWriter, r *http.Request) error {
	p, c, pattern, err := h.searchParams(r)
	if err != nil {
		return err
	}
	res, err := agentapi.Call[wire.GlobResult](r.Context(), c, agentapi.Glob, agentapi.Params{}, wire.GlobRequest{Path: p, Pattern: pattern})
	if err != nil {
		return err
	}
	if res.Truncated {
		return invalid(wire.CodeInvalidParameter, "more than %d names under %s match %q: search a narrower path or pattern", agentapi.MaxGlobFiles, p, pattern)
	}
	writeJSON(w, http.StatusOK, map[string]any{"files": res.Files})
	return nil
}

// searchParams are the path and pattern of a search and the agent.
func (h *Handler) searchParams(r *http.Request) (string, *agentapi.Client, string, error) {
	p, err := pathParam(r)
	if err != nil {
		return "", nil, "", err
	}
	pattern := r.URL.Query().Get("pattern")
	if pattern == "" {
		return "", nil, "", invalid(wire.CodeInvalidParameter, "pattern is required")
	}
	c, _, err := h.agentFor(r)
	return p, c, pattern, err
}

// replaceInFiles serves POST /files/replace {files, pattern, newValue},
// done by the agent file by file.
func (h *Handler) replaceInFiles(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Files    []string `json:"files"`
		Pattern  string   `json:"pattern"`
		NewValue string   `json:"newValue"`
	}
	if err := decode(w, r, &in); err != nil {
		return err
	}
	if in.Pattern == "" {
		return invalid(wire.CodeInvalidParameter, "pattern is required")
	}
	c, _, err := h.agentFor(r)
	if err != nil {
		return err
	}
	res, err := agentapi.Call[[]wire.ReplaceResult](r.Context(), c, agentapi.Replace, agentapi.Params{}, wire.ReplaceRequest{Files: in.Files, Old: in.Pattern, New: in.NewValue})
	if err != nil {
		return err
	}
	type result struct {
		File    string `json:"file"`
		Success bool   `json:"success"`
		Error   string `json:"error,omitempty"`
	}
	out := []result{}
	for _, x := range res {
		out = append(out, result{File: x.File, Success: x.Error == "", Error: x.Error})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
