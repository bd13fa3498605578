package ui

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"time"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/httpjson"
	"github.com/sbxhq/sbx/wire"
)

// Assets is the built front end (web/, scripts/build-ui.sh). It is
// committed so that `go build` works from a clean clone without node;
// TestAssetsAreFresh fails when it is stale against web/.
//
//go:embed assets
var embedded embed.FS

// Assets is the embedded front end: index.html, app.js, app.css.
var Assets, _ = fs.Sub(embedded, "assets")

// etags are the assets' content hashes, computed once.
var etags = map[string]string{}

func init() {
	entries, _ := fs.ReadDir(Assets, ".")
	for _, e := range entries {
		b, _ := fs.ReadFile(Assets, e.Name())
		sum := sha256.Sum256(b)
		etags[e.Name()] = `"` + hex.EncodeToString(sum[:8]) + `"`
	}
}

func serveIndex(w http.ResponseWriter, r *http.Request) { serveFile(w, r, "index.html") }

func serveAsset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	if name == "index.html" || path.Base(name) != name {
		name = ""
	}
	serveFile(w, r, name)
}

// serveFile answers with an embedded file, revalidated by its ETag on
// every load so a new daemon's dashboard is never mixed with an old cache.
func serveFile(w http.ResponseWriter, r *http.Request, name string) {
	etag, ok := etags[name]
	if !ok {
		httpjson.WriteError(w, errdefs.NotFound(wire.CodeRouteNotFound, "no dashboard file %q", name))
		return
	}
	b, _ := fs.ReadFile(Assets, name)
	w.Header().Set("ETag", etag)
	w.Header().Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(b))
}
