package daytona

import (
	"bytes"
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
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/sdk"
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

func toFileInfo(f sdk.FileInfo) fileInfo {
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
		Permissions: f.Mode, ModTime: t, ModifiedAt: t, Owner: "root", Group: "root"}
}

func pathParam(r *http.Request) (string, error) {
	p := r.URL.Query().Get("path")
	if p == "" {
		return "", invalid(sdk.CodeInvalidPath, "path is required")
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
	var list []sdk.FileInfo
	if err := call(r.Context(), c, agentapi.ListFiles, agentapi.ListFiles.Path, q, nil, &list); err != nil {
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
	var f sdk.FileInfo
	if err := call(r.Context(), c, agentapi.StatFile, agentapi.StatFile.Path, url.Values{"path": {p}}, nil, &f); err != nil {
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
			return invalid(sdk.CodeInvalidMode, "mode must be octal permission bits like 755, got %q", mode)
		}
		mode = "0" + strings.TrimLeft(mode, "0")
	}
	c, _, err := h.agentFor(r)
	if err != nil {
		return err
	}
	if err := call(r.Context(), c, agentapi.Mkdir, agentapi.Mkdir.Path, nil, sdk.MkdirRequest{Path: p, Mode: mode, Parents: true}, nil); err != nil {
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
	if err := call(r.Context(), c, agentapi.DeleteFile, agentapi.DeleteFile.Path, q, nil, nil); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (h *Handler) moveFile(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	from, to := q.Get("source"), q.Get("destination")
	if from == "" || to == "" {
		return invalid(sdk.CodeInvalidPath, "source and destination are required")
	}
	c, _, err := h.agentFor(r)
	if err != nil {
		return err
	}
	if err := call(r.Context(), c, agentapi.Move, agentapi.Move.Path, nil, sdk.MoveRequest{From: from, To: to}, nil); err != nil {
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
	resp, err := c.Forward(r.Context(), agentapi.Request{Method: agentapi.GetFile.Method, Path: agentapi.GetFile.Path, RawQuery: url.Values{"path": {path}}.Encode()})
	if err != nil {
		return nil, agentLost(err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		return nil, agentapi.ResponseError(resp)
	}
	return resp.Body, nil
}

// putFile writes body to path in the sandbox, creating parent directories.
func putFile(r *http.Request, c *agentapi.Client, path string, body io.Reader, size int64) error {
	resp, err := c.Forward(r.Context(), agentapi.Request{Method: agentapi.PutFile.Method, Path: agentapi.PutFile.Path,
		RawQuery: url.Values{"path": {path}, "parents": {"true"}}.Encode(), Body: body, ContentLength: size,
		ContentType: "application/octet-stream"})
	if err != nil {
		return agentLost(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return agentapi.ResponseError(resp)
	}
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
		return invalid(sdk.CodeInvalidPath, "paths is required: the files to download")
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
		return invalid(sdk.CodeInvalidParameter, "the body must be multipart/form-data with files[i].path and files[i].file: %v", err)
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
			return invalid(sdk.CodeInvalidParameter, "reading the multipart body: %v", err)
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
				return invalid(sdk.CodeInvalidParameter, "reading %s: %v", name, err)
			}
			paths[idx] = string(b)
		case "file":
			dst := paths[idx]
			if dst == "" {
				dst = part.FileName() // the SDK names the file part by its destination too
			}
			if dst == "" {
				return invalid(sdk.CodeInvalidPath, "%s came without %s.path", name, idx)
			}
			if err := putFile(r, c, dst, part, -1); err != nil {
				return err
			}
		}
		part.Close()
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

// setPermissions serves POST /files/permissions?path&owner&group&mode with
// chmod and chown run by the agent (argv, no shell).
func (h *Handler) setPermissions(w http.ResponseWriter, r *http.Request) error {
	p, err := pathParam(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	var cmds [][]string
	if m := q.Get("mode"); m != "" {
		if _, err := strconv.ParseUint(m, 8, 32); err != nil {
			return invalid(sdk.CodeInvalidMode, "mode must be octal permission bits like 755, got %q", m)
		}
		cmds = append(cmds, []string{"chmod", m, "--", p})
	}
	owner, group := q.Get("owner"), q.Get("group")
	for _, s := range []string{owner, group} {
		if strings.ContainsAny(s, ":/ ") || strings.HasPrefix(s, "-") {
			return invalid(sdk.CodeInvalidParameter, "owner and group must be plain user and group names, got %q", s)
		}
	}
	if owner != "" || group != "" {
		spec := owner
		if group != "" {
			spec += ":" + group
		}
		cmds = append(cmds, []string{"chown", spec, "--", p})
	}
	c, _, err := h.agentFor(r)
	if err != nil {
		return err
	}
	for _, cmd := range cmds {
		var res sdk.ExecResult
		if err := call(r.Context(), c, agentapi.Exec, agentapi.Exec.Path, nil, sdk.ExecRequest{Cmd: cmd}, &res); err != nil {
			return err
		}
		if res.ExitCode != 0 {
			return invalid(sdk.CodeInvalidParameter, "%s: %s", cmd[0], strings.TrimSpace(res.Stderr))
		}
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

// match is Daytona's Match (findFiles).
type match struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Content string `json:"content"`
}

// findInFiles serves GET /files/find?path&pattern: lines containing
// pattern, found with grep in the sandbox.
func (h *Handler) findInFiles(w http.ResponseWriter, r *http.Request) error {
	p, err := pathParam(r)
	if err != nil {
		return err
	}
	pattern := r.URL.Query().Get("pattern")
	if pattern == "" {
		return invalid(sdk.CodeInvalidParameter, "pattern is required")
	}
	out, err := h.run(r, []string{"grep", "-rnIF", "--", pattern, p}, 1)
	if err != nil {
		return err
	}
	matches := []match{}
	for _, line := range strings.Split(out, "\n") {
		file, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		num, content, ok := strings.Cut(rest, ":")
		n, err := strconv.Atoi(num)
		if !ok || err != nil {
			continue
		}
		matches = append(matches, match{File: file, Line: n, Content: content})
	}
	writeJSON(w, http.StatusOK, matches)
	return nil
}

// searchFiles serves GET /files/search?path&pattern: files whose name
// matches a glob, found with find in the sandbox.
func (h *Handler) searchFiles(w http.ResponseWriter, r *http.Request) error {
	p, err := pathParam(r)
	if err != nil {
		return err
	}
	pattern := r.URL.Query().Get("pattern")
	if pattern == "" {
		return invalid(sdk.CodeInvalidParameter, "pattern is required")
	}
	out, err := h.run(r, []string{"find", p, "-name", pattern}, 0)
	if err != nil {
		return err
	}
	files := []string{}
	for _, f := range strings.Split(out, "\n") {
		if f != "" {
			files = append(files, f)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"files": files})
	return nil
}

// run runs argv in the sandbox and returns its stdout; an exit code above
// okUpTo is an error with its stderr.
func (h *Handler) run(r *http.Request, argv []string, okUpTo int) (string, error) {
	c, _, err := h.agentFor(r)
	if err != nil {
		return "", err
	}
	var res sdk.ExecResult
	if err := call(r.Context(), c, agentapi.Exec, agentapi.Exec.Path, nil, sdk.ExecRequest{Cmd: argv}, &res); err != nil {
		return "", err
	}
	if res.ExitCode > okUpTo {
		if strings.Contains(res.Stderr, "No such file") {
			return "", errdefs.NotFound(sdk.CodeFileNotFound, "%s", strings.TrimSpace(res.Stderr))
		}
		return "", invalid(sdk.CodeInvalidParameter, "%s failed: %s", argv[0], strings.TrimSpace(res.Stderr))
	}
	return res.Stdout, nil
}

// replaceInFiles serves POST /files/replace {files, pattern, newValue}:
// each file is read, changed and written back through the agent.
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
		return invalid(sdk.CodeInvalidParameter, "pattern is required")
	}
	c, _, err := h.agentFor(r)
	if err != nil {
		return err
	}
	type result struct {
		File    string `json:"file"`
		Success bool   `json:"success"`
		Error   string `json:"error,omitempty"`
	}
	results := []result{}
	for _, f := range in.Files {
		err := replaceIn(r, c, f, in.Pattern, in.NewValue)
		res := result{File: f, Success: err == nil}
		if err != nil {
			res.Error = err.Error()
		}
		results = append(results, res)
	}
	writeJSON(w, http.StatusOK, results)
	return nil
}

// maxReplaceFile bounds a file replaceInFiles reads whole.
const maxReplaceFile = 64 << 20

func replaceIn(r *http.Request, c *agentapi.Client, path, old, new string) error {
	body, err := getFile(r, c, path)
	if err != nil {
		return err
	}
	b, err := io.ReadAll(io.LimitReader(body, maxReplaceFile+1))
	body.Close()
	if err != nil {
		return agentLost(err)
	}
	if len(b) > maxReplaceFile {
		return errdefs.TooLarge(sdk.CodeBodyTooLarge, "%s is larger than %d bytes", path, maxReplaceFile)
	}
	changed := bytes.ReplaceAll(b, []byte(old), []byte(new))
	return putFile(r, c, path, bytes.NewReader(changed), int64(len(changed)))
}
