package api

import (
	"net/http"

	"github.com/sbxhq/sbx/sdk"
)

// route is one API operation. The mux and the OpenAPI document are both built
// from this table, so they cannot drift apart.
type route struct {
	method, pattern string
	summary         string
	handler         http.HandlerFunc
	public          bool    // no API key needed
	query           []param // query parameters
	body            any     // request body type for the document; rawBody for bytes
	status          int     // success status
	response        any     // response type; nil for none, rawBody for bytes, ndjson for a stream
}

type param struct{ name, typ, doc string }

type (
	rawBody struct{}
	ndjson  struct{}
)

func (s *Server) routes() []route {
	sandboxQ := []param{{"state", "string", "only sandboxes in this state"}, {"label", "string", "k=v; repeat to require several labels"}}
	pathQ := param{"path", "string", "path inside the sandbox; relative paths start at the workdir"}
	return []route{
		{method: "GET", pattern: "/healthz", summary: "Daemon liveness", handler: s.health, public: true, status: 200, response: map[string]bool{}},
		{method: "GET", pattern: "/v1/openapi.json", summary: "This document", handler: s.openapi, status: 200, response: map[string]any{}},

		{method: "POST", pattern: "/v1/sandboxes", summary: "Create and start a sandbox", handler: s.createSandbox, body: sdk.CreateSandboxRequest{}, status: 201, response: sdk.Sandbox{}},
		{method: "GET", pattern: "/v1/sandboxes", summary: "List sandboxes", handler: s.listSandboxes, query: sandboxQ, status: 200, response: []sdk.Sandbox{}},
		{method: "GET", pattern: "/v1/sandboxes/{id}", summary: "Get a sandbox by id or name", handler: s.getSandbox, status: 200, response: sdk.Sandbox{}},
		{method: "PUT", pattern: "/v1/sandboxes/{id}", summary: "Get or create the sandbox with this name (201 when created, 200 when it existed)", handler: s.ensureSandbox, body: sdk.CreateSandboxRequest{}, status: 200, response: sdk.Sandbox{}},
		{method: "DELETE", pattern: "/v1/sandboxes/{id}", summary: "Delete a sandbox (202, or 204 with wait=true once it is gone)", handler: s.deleteSandbox, query: []param{{"wait", "boolean", "block until everything is removed"}}, status: 202, response: sdk.Sandbox{}},
		{method: "POST", pattern: "/v1/sandboxes/{id}/start", summary: "Start a stopped sandbox", handler: s.startSandbox, status: 200, response: sdk.Sandbox{}},
		{method: "POST", pattern: "/v1/sandboxes/{id}/stop", summary: "Stop a sandbox: SIGTERM, grace period, SIGKILL", handler: s.stopSandbox, query: []param{{"graceSeconds", "integer", "seconds between SIGTERM and SIGKILL (default 10)"}, {"force", "boolean", "SIGKILL at once"}}, status: 200, response: sdk.Sandbox{}},

		{method: "POST", pattern: "/v1/sandboxes/{id}/exec", summary: "Run a command; with stream=true the answer is NDJSON ExecEvents", handler: s.exec, query: []param{{"stream", "boolean", "stream events as NDJSON"}}, body: sdk.ExecRequest{}, status: 200, response: sdk.ExecResult{}},
		{method: "PUT", pattern: "/v1/sandboxes/{id}/files", summary: "Upload a file (body streamed)", handler: s.proxy, query: []param{pathQ, {"mode", "string", "octal permission bits, default 0644"}, {"parents", "boolean", "create missing parent directories"}}, body: rawBody{}, status: 200, response: sdk.FileInfo{}},
		{method: "GET", pattern: "/v1/sandboxes/{id}/files", summary: "Download a file (streamed)", handler: s.proxy, query: []param{pathQ}, status: 200, response: rawBody{}},
		{method: "DELETE", pattern: "/v1/sandboxes/{id}/files", summary: "Delete a file or directory", handler: s.proxy, query: []param{pathQ, {"recursive", "boolean", "delete a non-empty directory"}}, status: 204},
		{method: "GET", pattern: "/v1/sandboxes/{id}/files/list", summary: "List a directory", handler: s.proxy, query: []param{pathQ}, status: 200, response: []sdk.FileInfo{}},
		{method: "GET", pattern: "/v1/sandboxes/{id}/files/stat", summary: "Describe a file", handler: s.proxy, query: []param{pathQ}, status: 200, response: sdk.FileInfo{}},
		{method: "POST", pattern: "/v1/sandboxes/{id}/files/mkdir", summary: "Create a directory", handler: s.proxy, body: sdk.MkdirRequest{}, status: 200, response: sdk.FileInfo{}},
		{method: "POST", pattern: "/v1/sandboxes/{id}/files/move", summary: "Move or rename a file", handler: s.proxy, body: sdk.MoveRequest{}, status: 200, response: sdk.FileInfo{}},

		{method: "GET", pattern: "/v1/images", summary: "List images", handler: s.listImages, status: 200, response: []sdk.Image{}},
		{method: "POST", pattern: "/v1/images/import", summary: "Import an image from a tar stream: a rootfs tree, an OCI image layout or a docker-save tarball (plain, gzip or zstd)", handler: s.importImage, query: []param{{"name", "string", "name of the new image"}}, body: rawBody{}, status: 201, response: sdk.Image{}},
		{method: "POST", pattern: "/v1/images/pull", summary: "Pull an image from an OCI registry", handler: s.pullImage, body: sdk.PullRequest{}, status: 201, response: sdk.Image{}},
		{method: "GET", pattern: "/v1/images/{name...}", summary: "Get an image", handler: s.getImage, status: 200, response: sdk.Image{}},
		{method: "DELETE", pattern: "/v1/images/{name...}", summary: "Delete an image (409 while a sandbox uses it)", handler: s.deleteImage, status: 204},
	}
}
