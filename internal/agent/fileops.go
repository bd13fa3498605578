package agent

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// File operations done here, next to the files, so a caller never runs
// chmod, grep or find nor reads a tree through itself: permissions and
// owner, search by content and by name, replace. Searches are bounded by
// a number of answers; replace by the size of one file.

// setPermissions changes a file's mode and owner; empty fields stay.
func (s *server) setPermissions(_ context.Context, req wire.PermissionsRequest) (wire.FileInfo, error) {
	path, err := s.path(req.Path)
	if err != nil {
		return wire.FileInfo{}, err
	}
	uid, gid := -1, -1
	if req.Owner != "" {
		e, ok := findPasswd(req.Owner)
		if !ok {
			n, numeric := parseID(req.Owner)
			if !numeric {
				return wire.FileInfo{}, errdefs.Invalid(wire.CodeUnknownUser, "no user %q in the sandbox's /etc/passwd", req.Owner)
			}
			uid = int(n)
		} else {
			n, _ := parseID(e[2])
			uid = int(n)
		}
	}
	if req.Group != "" {
		g, ok := findGroup(req.Group)
		if !ok {
			return wire.FileInfo{}, errdefs.Invalid(wire.CodeUnknownUser, "no group %q in the sandbox's /etc/group", req.Group)
		}
		gid = int(g)
	}
	if req.Mode != "" {
		m, err := parseMode(req.Mode)
		if err != nil {
			return wire.FileInfo{}, err
		}
		if err := os.Chmod(path, m); err != nil {
			return wire.FileInfo{}, fsError(err, path)
		}
	}
	if uid >= 0 || gid >= 0 {
		if err := os.Lchown(path, uid, gid); err != nil {
			return wire.FileInfo{}, fsError(err, path)
		}
	}
	return fileInfo(path)
}

// findGroup returns the gid of the group named (or numbered) name; a
// number not in /etc/group is that gid.
func findGroup(name string) (uint32, bool) {
	var gid uint32
	found := false
	scanColonFile(groupFile, func(f []string) bool {
		if len(f) >= 3 && (f[0] == name || f[2] == name) {
			gid, found = parseID(f[2])
			return false
		}
		return true
	})
	if !found {
		return parseID(name)
	}
	return gid, true
}

// lookupAccount answers the account ?name= (a name or uid; default root,
// whom commands run as unless they name a user) of /etc/passwd.
func lookupAccount(r *http.Request) (wire.User, error) {
	name := r.URL.Query().Get("name")
	if name == "" {
		name = "0"
	}
	cred, home, err := lookupUser(name)
	if err != nil {
		return wire.User{}, err
	}
	u := wire.User{Name: name, UID: cred.Uid, GID: cred.Gid, Home: home}
	if e, ok := findPasswd(name); ok {
		u.Name = e[0]
	}
	return u, nil
}

// ownerNames are the names of a file's user and group, or their numbers
// when the sandbox's /etc/passwd or /etc/group does not name them.
func ownerNames(fi fs.FileInfo) (string, string) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "", ""
	}
	owner, group := strconv.FormatUint(uint64(st.Uid), 10), strconv.FormatUint(uint64(st.Gid), 10)
	if e, ok := findPasswd(owner); ok {
		owner = e[0]
	}
	scanColonFile(groupFile, func(f []string) bool {
		if len(f) >= 3 && f[2] == group {
			group = f[0]
			return false
		}
		return true
	})
	return owner, group
}

// walkFiles calls each for every entry under root (root itself included
// when it is a file), in lexical order, until each returns false.
// Unreadable directories are skipped, as grep -r and find do.
func (s *server) walkFiles(root string, each func(path string, d fs.DirEntry) bool) error {
	dir, err := s.path(root)
	if err != nil {
		return err
	}
	if _, err := os.Lstat(dir); err != nil {
		return fsError(err, dir)
	}
	stop := errors.New("stop")
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !each(p, d) {
			return stop
		}
		return nil
	})
	if err != nil && err != stop {
		return fsError(err, dir)
	}
	return nil
}

// maxGrepLine bounds a line grep reads; a file with a longer one is skipped.
const maxGrepLine = 1 << 20

// grep finds the lines containing a string in the text files under a path
// (binary files, those with a NUL byte early on, are skipped, as grep -I).
func (s *server) grep(_ context.Context, req wire.GrepRequest) (wire.GrepResult, error) {
	if req.Pattern == "" || strings.ContainsAny(req.Pattern, "\n\x00") {
		return wire.GrepResult{}, errdefs.Invalid(wire.CodeInvalidParameter, "pattern must be a non-empty string on one line")
	}
	limit := req.Max
	if limit <= 0 || limit > agentapi.MaxGrepMatches {
		limit = agentapi.MaxGrepMatches
	}
	match, err := grepMatcher(req)
	if err != nil {
		return wire.GrepResult{}, err
	}
	res := wire.GrepResult{Matches: []wire.GrepMatch{}}
	err = s.walkFiles(req.Path, func(p string, d fs.DirEntry) bool {
		if !d.Type().IsRegular() {
			return true
		}
		f, err := os.Open(p)
		if err != nil {
			return true
		}
		defer f.Close()
		br := bufio.NewReader(f)
		if head, _ := br.Peek(8000); bytes.IndexByte(head, 0) >= 0 {
			return true
		}
		sc := bufio.NewScanner(br)
		sc.Buffer(make([]byte, 64<<10), maxGrepLine)
		for n := 1; sc.Scan(); n++ {
			if match(sc.Bytes()) {
				if len(res.Matches) == limit {
					res.Truncated = true
					return false
				}
				res.Matches = append(res.Matches, wire.GrepMatch{File: p, Line: n, Content: sc.Text()})
			}
		}
		return true
	})
	return res, err
}

// grepMatcher is the line test of a grep request: a plain substring, or
// an RE2 expression (linear time, so a hostile pattern cannot hang the agent).
func grepMatcher(req wire.GrepRequest) (func([]byte) bool, error) {
	if !req.Regex {
		pattern := []byte(req.Pattern)
		return func(line []byte) bool { return bytes.Contains(line, pattern) }, nil
	}
	re, err := regexp.Compile(req.Pattern)
	if err != nil {
		return nil, errdefs.Invalid(wire.CodeInvalidParameter, "pattern is not a regular expression: %v", err)
	}
	return re.Match, nil
}

// glob finds the files and directories under a path whose name matches a
// pattern, as find -name.
func (s *server) glob(_ context.Context, req wire.GlobRequest) (wire.GlobResult, error) {
	if _, err := filepath.Match(req.Pattern, ""); err != nil || req.Pattern == "" {
		return wire.GlobResult{}, errdefs.Invalid(wire.CodeInvalidParameter, "pattern %q is not a valid name pattern (*, ?, [...])", req.Pattern)
	}
	limit := req.Max
	if limit <= 0 || limit > agentapi.MaxGlobFiles {
		limit = agentapi.MaxGlobFiles
	}
	res := wire.GlobResult{Files: []string{}}
	err := s.walkFiles(req.Path, func(p string, d fs.DirEntry) bool {
		if ok, _ := filepath.Match(req.Pattern, d.Name()); ok {
			if len(res.Files) == limit {
				res.Truncated = true
				return false
			}
			res.Files = append(res.Files, p)
		}
		return true
	})
	return res, err
}

// replace rewrites each file with every occurrence of a string replaced,
// through a temporary file renamed over it (mode and owner kept), so a
// reader never sees half a file. Each file has its own outcome.
func (s *server) replace(_ context.Context, req wire.ReplaceRequest) ([]wire.ReplaceResult, error) {
	if req.Old == "" {
		return nil, errdefs.Invalid(wire.CodeInvalidParameter, "the string to replace must not be empty")
	}
	out := make([]wire.ReplaceResult, 0, len(req.Files))
	for _, f := range req.Files {
		n, err := s.replaceIn(f, []byte(req.Old), []byte(req.New))
		r := wire.ReplaceResult{File: f, Replaced: n}
		if err != nil {
			r.Error = err.Error()
		}
		out = append(out, r)
	}
	return out, nil
}

func (s *server) replaceIn(file string, old, new []byte) (int, error) {
	path, err := s.path(file)
	if err != nil {
		return 0, err
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, fsError(err, path)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, fsError(err, path)
	}
	if !fi.Mode().IsRegular() {
		return 0, errdefs.Invalid(wire.CodeInvalidPath, "%s is not a regular file", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, agentapi.MaxReplaceFile+1))
	if err != nil {
		return 0, fsError(err, path)
	}
	if len(b) > agentapi.MaxReplaceFile {
		return 0, errdefs.TooLarge(wire.CodeBodyTooLarge, "%s is larger than %d bytes, the most replace rewrites", path, agentapi.MaxReplaceFile)
	}
	n := bytes.Count(b, old)
	if n == 0 {
		return 0, nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".sbx-replace-*")
	if err != nil {
		return 0, fsError(err, path)
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing left
	_, err = tmp.Write(bytes.ReplaceAll(b, old, new))
	if err == nil {
		err = tmp.Chmod(fi.Mode().Perm() | fi.Mode()&(os.ModeSetuid|os.ModeSetgid|os.ModeSticky))
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && err == nil {
		err = tmp.Chown(int(st.Uid), int(st.Gid))
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return 0, fsError(err, path)
	}
	return n, nil
}
