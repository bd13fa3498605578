package e2b

import (
	"crypto/hmac"
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/authz"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/volume"
	"github.com/sbxhq/sbx/wire"
)

// Volume's file methods: E2B's volume content API
// (E2B_VOLUME_API_URL/volumecontent/{volumeID}/{dir,path,file}) on sbx's
// volume file service (volume.Files, which keeps every path inside the
// volume). The SDK authenticates with the volume's token from
// Volume.create/getInfo/connect: like the envd access token (tokens.go) it
// is the caller's key's team and scopes signed over the volume's sbx id, so
// it dies with the key, and a volume deleted and made again under the same
// name needs a new one.

// volumeToken is principal p's token for the volume of sbx id.
func (s *Server) volumeToken(p auth.Principal, id string) string {
	return s.accessToken(p, "volume\x00"+id)
}

var errBadVolumeToken = errors.New("missing or wrong volume token: send the token Volume.create, Volume.getInfo or Volume.connect answered (Authorization: Bearer)")

// volumeContentOps are what each request needs.
var volumeContentOps = map[string]authz.Op{
	"GET dir":     authz.ExecRead,
	"POST dir":    authz.Exec,
	"GET path":    authz.ExecRead,
	"PATCH path":  authz.Exec,
	"DELETE path": authz.Exec,
	"GET file":    authz.ExecRead,
	"PUT file":    authz.Exec,
}

// volumeEntryJSON is E2B's VolumeEntryStat.
type volumeEntryJSON struct {
	Name   string    `json:"name"`
	Path   string    `json:"path"`
	Type   string    `json:"type"`
	Size   int64     `json:"size"`
	Mode   uint32    `json:"mode"`
	UID    uint32    `json:"uid"`
	GID    uint32    `json:"gid"`
	Atime  time.Time `json:"atime"`
	Mtime  time.Time `json:"mtime"`
	Ctime  time.Time `json:"ctime"`
	Target string    `json:"target,omitempty"`
}

func volumeEntry(e volume.Entry) volumeEntryJSON {
	return volumeEntryJSON{Name: e.Name, Path: e.Path, Type: e.Type, Size: e.Size, Mode: e.Mode, UID: e.UID, GID: e.GID, Atime: e.Atime, Mtime: e.Mtime, Ctime: e.Ctime, Target: e.Target}
}

// serveVolumeContent serves rest, "/volumecontent/{volumeID}/{kind}".
func (s *Server) serveVolumeContent(w http.ResponseWriter, r *http.Request, rest string) {
	parts := strings.Split(strings.Trim(rest, "/"), "/")
	op, ok := authz.Op{}, len(parts) == 3
	if ok {
		op, ok = volumeContentOps[r.Method+" "+parts[2]]
	}
	if !ok {
		writeAPIError(w, errdefs.NotFound(wire.CodeRouteNotFound, "sbx's E2B layer does not serve %s %s", r.Method, rest))
		return
	}
	name, kind := parts[1], parts[2]
	vols, err := s.volumes()
	if err != nil {
		writeAPIError(w, err)
		return
	}
	p, err := s.checkVolumeToken(r, vols, name)
	if err != nil {
		writeAPIError(w, errdefs.Unauthorized(wire.CodeUnauthorized, "%s", err.Error()))
		return
	}
	w, r, end, err := s.gate.HTTP(w, r, p, op)
	defer end()
	if err == nil {
		err = s.volumeContent(w, r, vols, name, kind)
	}
	if err != nil {
		writeAPIError(w, err)
	}
}

// checkVolumeToken returns the principal of r's volume token for volume
// name (in the token's team).
func (s *Server) checkVolumeToken(r *http.Request, vols Volumes, name string) (auth.Principal, error) {
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	c, claims, ok := parseToken(tok)
	if !ok {
		return auth.Principal{}, errBadVolumeToken
	}
	p, err := s.tokenPrincipal(r.Context(), claims)
	if err != nil {
		return auth.Principal{}, err
	}
	id, err := vols.ID(auth.WithPrincipal(r.Context(), p), name)
	if err != nil || !hmac.Equal([]byte(tok[len(c)+1:]), []byte(s.sign(c, "volume\x00"+id))) {
		return auth.Principal{}, errBadVolumeToken
	}
	return p, nil
}

// volumeContent performs one request of an admitted caller.
func (s *Server) volumeContent(w http.ResponseWriter, r *http.Request, vols Volumes, name, kind string) error {
	q := r.URL.Query()
	allowed := []string{"path"}
	switch r.Method + " " + kind {
	case "GET dir":
		allowed = append(allowed, "depth")
	case "POST dir", "PUT file":
		allowed = append(allowed, "uid", "gid", "mode", "force")
	}
	for k := range q {
		if !slices.Contains(allowed, k) {
			return errdefs.Invalid(wire.CodeInvalidParameter, "query parameter %q is not supported here by sbx's E2B layer (it takes %s)", k, strings.Join(allowed, ", "))
		}
	}
	if !q.Has("path") {
		return errdefs.Invalid(wire.CodeInvalidParameter, "path is required")
	}
	path := q.Get("path")
	files, err := vols.Files(r.Context(), name)
	if err != nil {
		return err
	}
	defer files.Close()
	var entry volume.Entry
	switch r.Method + " " + kind {
	case "GET dir":
		depth := 1
		if q.Has("depth") {
			if depth, err = strconv.Atoi(q.Get("depth")); err != nil {
				return errdefs.Invalid(wire.CodeInvalidParameter, "depth %q is not a number", q.Get("depth"))
			}
		}
		list, err := files.List(path, depth)
		if err != nil {
			return err
		}
		out := make([]volumeEntryJSON, 0, len(list))
		for _, e := range list {
			out = append(out, volumeEntry(e))
		}
		writeJSON(w, http.StatusOK, out)
		return nil
	case "GET path":
		entry, err = files.Stat(path)
	case "GET file":
		f, err := files.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		w.Header().Set("Content-Type", "application/octet-stream")
		io.Copy(w, f)
		return nil
	case "DELETE path":
		if err := files.Remove(path); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	case "PATCH path":
		var body struct {
			UID  *uint32 `json:"uid"`
			GID  *uint32 `json:"gid"`
			Mode *uint32 `json:"mode"`
		}
		if err := decodeJSON(w, r, &body, true); err != nil {
			return err
		}
		entry, err = files.SetAttrs(path, volume.Attrs{UID: body.UID, GID: body.GID, Mode: body.Mode})
	case "POST dir", "PUT file":
		a, force, err := writeAttrs(q)
		if err != nil {
			return err
		}
		status := http.StatusOK
		if kind == "dir" {
			// Without force, one directory under an existing one, and a
			// directory that exists is a conflict.
			entry, err = files.MakeDir(path, force != nil && *force, a)
			status = http.StatusCreated
		} else {
			// writeFile replaces a file that exists unless force is false.
			entry, err = files.Write(path, r.Body, force == nil || *force, a)
		}
		if err != nil {
			return err
		}
		writeJSON(w, status, volumeEntry(entry))
		return nil
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, volumeEntry(entry))
	return nil
}

// writeAttrs reads makeDir's and writeFile's uid, gid, mode and force.
func writeAttrs(q url.Values) (volume.Attrs, *bool, error) {
	var a volume.Attrs
	num := func(k string, dst **uint32) error {
		if !q.Has(k) {
			return nil
		}
		v, err := strconv.ParseUint(q.Get(k), 10, 32)
		if err != nil {
			return errdefs.Invalid(wire.CodeInvalidParameter, "%s %q is not a number", k, q.Get(k))
		}
		u := uint32(v)
		*dst = &u
		return nil
	}
	for k, dst := range map[string]**uint32{"uid": &a.UID, "gid": &a.GID, "mode": &a.Mode} {
		if err := num(k, dst); err != nil {
			return a, nil, err
		}
	}
	if !q.Has("force") {
		return a, nil, nil
	}
	force, err := strconv.ParseBool(q.Get("force"))
	if err != nil {
		return a, nil, errdefs.Invalid(wire.CodeInvalidParameter, "force %q is not true or false", q.Get("force"))
	}
	return a, &force, nil
}
