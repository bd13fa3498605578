package api

// Background processes, sessions, terminals and watches: their routes are
// rows in routes.go, most of them plain s.proxy rows, since the agent serves
// each under the same path without the /v1/sandboxes/{id} prefix. Terminal
// attach is a WebSocket, which s.proxy passes through (httputil.ReverseProxy
// handles the Upgrade and copies both ways). Streams go through streamProxy
// (toolbox.go).

// pathParamDocs describes path parameters other than the sandbox's {id}
// in the OpenAPI document.
var pathParamDocs = map[string]string{
	"process": "background process id",
	"session": "session id",
	"pty":     "terminal id",
	"access":  "SSH access id (ssh-…)",
}
