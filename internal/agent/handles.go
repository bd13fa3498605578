package agent

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strings"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// Old handles fail closed. A process, session, terminal or context lives
// only as long as the instance that made it, and the agent (PID 1) lives
// exactly as long as its instance: so the agent draws a random tag when it
// starts, and every resource it describes carries a handle, "<id>@<tag>".
// A request naming a handle of another tag is answered 404 STALE_HANDLE,
// so a handle kept across a stop never reaches a later instance's
// resource of the same id (a caller-chosen name such as "web" is reused
// freely). A bare id addresses whatever of that id runs now.
//
// The tag is drawn by the agent, not counted by the daemon, because a
// memory restore (pause and resume of class gvisor) brings the same
// instance back, tag included, and a daemon restart does not touch it.
var instanceTag = newInstanceTag()

func newInstanceTag() string {
	b := make([]byte, 6)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// handleOf returns the handle of the resource id in this instance.
func handleOf(id string) string { return id + "@" + instanceTag }

// handleParams are the path parameters that name an instance's resources.
var handleParams = []string{"process", "session", "pty", "cid"}

// resolveHandles turns a handle in the path into its id, or refuses a
// handle from another instance. Ids cannot contain "@" (idPattern).
func resolveHandles(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for _, name := range handleParams {
			v := r.PathValue(name)
			id, tag, ok := strings.Cut(v, "@")
			if !ok {
				continue
			}
			if tag != instanceTag {
				writeError(w, errdefs.NotFound(wire.CodeStaleHandle,
					"%q is a handle from an earlier instance of this sandbox: what it named ended with that instance; list or create anew", v))
				return
			}
			r.SetPathValue(name, id)
		}
		h(w, r)
	}
}
