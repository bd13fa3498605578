package e2b

import (
	"net/http"
	"strings"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/authz"
	"github.com/sbxhq/sbx/internal/compat/e2b/envdpb/filesystempb/filesystempbconnect"
	"github.com/sbxhq/sbx/internal/compat/e2b/envdpb/processpb/processpbconnect"
)

// What each E2B operation needs (internal/authz): one decision per REST
// route, envd RPC or endpoint, and code-interpreter endpoint. An operation
// missing here needs admin (fail closed); gate_test.go walks the services'
// own descriptors so that a new RPC cannot go without a decision.

// restRoutes is the control plane (rest.go); paths below Prefix (and v2/).
func (s *Server) restRoutes() []restRoute {
	connect := func(w http.ResponseWriter, r *http.Request, id string) error {
		return s.connect(w, r, id, principalOf(r))
	}
	return []restRoute{
		{"POST", "/sandboxes", authz.Write, func(w http.ResponseWriter, r *http.Request, _ string) error { return s.create(w, r, principalOf(r)) }},
		{"GET", "/sandboxes", authz.Read, func(w http.ResponseWriter, r *http.Request, _ string) error { return s.list(w, r) }},
		{"GET", "/sandboxes/{id}", authz.Read, s.get},
		{"DELETE", "/sandboxes/{id}", authz.Write, s.delete},
		{"POST", "/sandboxes/{id}/timeout", authz.Write, s.setTimeout},
		{"POST", "/sandboxes/{id}/pause", authz.Write, s.pause},
		{"POST", "/sandboxes/{id}/resume", authz.Write, connect},
		{"POST", "/sandboxes/{id}/connect", authz.Write, connect},
		{"POST", "/sandboxes/{id}/refreshes", authz.Write, s.refresh},
		{"PUT", "/sandboxes/{id}/network", authz.Write, s.updateNetwork},
		{"GET", "/sandboxes/{id}/metrics", authz.Read, s.metrics},
		{"GET", "/templates/aliases/{id}", authz.Read, s.templateAlias},
		{"POST", "/sandboxes/{id}/snapshots", authz.Write, s.createSnapshot},
		{"GET", "/snapshots", authz.Read, s.listSnapshots},
		{"DELETE", "/templates/{id}", authz.Write, s.deleteTemplate},
		{"POST", "/volumes", authz.Write, s.createVolume},
		{"GET", "/volumes", authz.Read, s.listVolumes},
		{"GET", "/volumes/{id}", authz.Read, s.getVolume},
		{"DELETE", "/volumes/{id}", authz.Write, s.deleteVolume},
		{"POST", "/secrets", authz.Write, s.createSecret},
		{"GET", "/secrets", authz.Read, s.listSecrets},
		{"GET", "/secrets/{id}", authz.Read, s.getSecret},
		{"POST", "/secrets/{id}", authz.Write, s.updateSecret},
		{"DELETE", "/secrets/{id}", authz.Write, s.deleteSecret},
		{"POST", "/sandboxes/{id}/fork", authz.Write, func(w http.ResponseWriter, r *http.Request, id string) error { return s.fork(w, r, id, principalOf(r)) }},
	}
}

func principalOf(r *http.Request) auth.Principal {
	p, _ := auth.FromContext(r.Context())
	return p
}

type restRoute struct {
	method, path string
	need         authz.Op
	fn           func(w http.ResponseWriter, r *http.Request, id string) error
}

// match reports whether a request of method on path (below Prefix, without
// v2/) is rt's, and the sandbox id it names.
func (rt restRoute) match(method, path string) (id string, ok bool) {
	if method != rt.method {
		return "", false
	}
	want, got := strings.Split(strings.Trim(rt.path, "/"), "/"), strings.Split(strings.Trim(path, "/"), "/")
	if len(want) != len(got) {
		return "", false
	}
	for i := range want {
		switch {
		case want[i] == "{id}" && got[i] != "":
			id = got[i]
		case want[i] != got[i]:
			return "", false
		}
	}
	return id, true
}

// envdOps are envd's (port 49983): its Connect RPCs by procedure, and its
// REST endpoints.
var envdOps = map[string]authz.Op{
	"POST " + processpbconnect.ProcessListProcedure:        authz.ExecRead,
	"POST " + processpbconnect.ProcessConnectProcedure:     authz.Exec,
	"POST " + processpbconnect.ProcessStartProcedure:       authz.Exec,
	"POST " + processpbconnect.ProcessUpdateProcedure:      authz.Exec,
	"POST " + processpbconnect.ProcessStreamInputProcedure: authz.Exec,
	"POST " + processpbconnect.ProcessSendInputProcedure:   authz.Exec,
	"POST " + processpbconnect.ProcessSendSignalProcedure:  authz.Exec,
	"POST " + processpbconnect.ProcessCloseStdinProcedure:  authz.Exec,

	"POST " + filesystempbconnect.FilesystemStatProcedure:             authz.ExecRead,
	"POST " + filesystempbconnect.FilesystemMakeDirProcedure:          authz.Exec,
	"POST " + filesystempbconnect.FilesystemMoveProcedure:             authz.Exec,
	"POST " + filesystempbconnect.FilesystemListDirProcedure:          authz.ExecRead,
	"POST " + filesystempbconnect.FilesystemRemoveProcedure:           authz.Exec,
	"POST " + filesystempbconnect.FilesystemWatchDirProcedure:         authz.ExecRead,
	"POST " + filesystempbconnect.FilesystemCreateWatcherProcedure:    authz.ExecRead,
	"POST " + filesystempbconnect.FilesystemGetWatcherEventsProcedure: authz.ExecRead,
	"POST " + filesystempbconnect.FilesystemRemoveWatcherProcedure:    authz.ExecRead,

	"GET /health": authz.ExecRead,
	"GET /files":  authz.ExecRead,
	"POST /files": authz.Exec,
}

// interpreterOps are the code interpreter's (port 49999; interpreter.go).
var interpreterOps = map[string]authz.Op{
	"POST /execute":               authz.Exec,
	"GET /health":                 authz.ExecRead,
	"POST /contexts":              authz.Exec,
	"GET /contexts":               authz.ExecRead,
	"DELETE /contexts/{id}":       authz.Exec,
	"POST /contexts/{id}/restart": authz.Exec,
}

// sandboxOp is what a request to port of a sandbox needs; path is below the
// sandbox URL. A port or path without a decision needs admin.
func sandboxOp(port, method, path string) authz.Op {
	ops := envdOps
	if port == "49999" {
		ops = interpreterOps
		if rest, ok := strings.CutPrefix(path, "/contexts/"); ok && rest != "" {
			id, restart := strings.CutSuffix(rest, "/restart")
			if !strings.Contains(id, "/") {
				path = "/contexts/{id}"
				if restart {
					path += "/restart"
				}
			}
		}
	} else if port != "49983" && port != "" {
		return authz.Op{}
	}
	return ops[method+" "+path]
}
