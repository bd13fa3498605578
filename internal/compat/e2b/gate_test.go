package e2b

import (
	"net/http/httptest"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/authz"
	"github.com/sbxhq/sbx/internal/authz/authztest"
	"github.com/sbxhq/sbx/internal/compat/e2b/envdpb/filesystempb"
	"github.com/sbxhq/sbx/internal/compat/e2b/envdpb/processpb"
)

// TestEveryOperationGated walks the layer's operations: the control
// plane's route table, envd's RPCs (from the services' own descriptors) and
// REST endpoints, and the code interpreter's. Each refuses a request
// without a credential (API key or envd token) and one whose key lacks
// its scope, applies the key's rate limit and audits writes.
func TestEveryOperationGated(t *testing.T) {
	h := authztest.New(t)
	s := New(&fakeSandboxes{}, h.Gate, Config{TokenSecret: []byte("s")})
	for _, rt := range s.restRoutes() {
		path := strings.ReplaceAll(rt.path, "{id}", "xid")
		h.Check(t, authztest.Op{
			Name: rt.method + " " + rt.path, Need: rt.need, Method: rt.method, Path: "/e2b" + path,
			Do: func(key string, _ auth.Principal) int {
				req := httptest.NewRequest(rt.method, "/e2b"+path, strings.NewReader("{}"))
				if key != "" {
					req.Header.Set("X-API-KEY", key)
				}
				rec := httptest.NewRecorder()
				s.ServeHTTP(rec, req)
				return rec.Code
			},
		}, nil)
	}

	// envd's RPCs: every method of every service has a decision.
	for _, fd := range []protoreflect.FileDescriptor{processpb.File_process_process_proto, filesystempb.File_filesystem_filesystem_proto} {
		for i := 0; i < fd.Services().Len(); i++ {
			svc := fd.Services().Get(i)
			for j := 0; j < svc.Methods().Len(); j++ {
				proc := "/" + string(svc.FullName()) + "/" + string(svc.Methods().Get(j).Name())
				if _, ok := envdOps["POST "+proc]; !ok {
					t.Errorf("envd RPC %s has no decision in envdOps", proc)
				}
			}
		}
	}
	sandboxOps := map[string]map[string]authz.Op{"49983": envdOps, "49999": interpreterOps}
	for port, ops := range sandboxOps {
		for name, need := range ops {
			method, path, _ := strings.Cut(name, " ")
			path = strings.ReplaceAll(path, "{id}", "ctx1")
			if got := sandboxOp(port, method, path); got != need {
				t.Errorf("port %s %s: sandboxOp %+v, want %+v", port, name, got, need)
			}
			h.Check(t, authztest.Op{
				Name: port + " " + name, Need: need, Method: method, Path: "/e2b/sandbox/sb1:" + port + path,
				Do: func(key string, p auth.Principal) int {
					req := httptest.NewRequest(method, "/e2b/sandbox"+path, strings.NewReader("{}"))
					req.Header.Set("E2b-Sandbox-Id", "sb1")
					req.Header.Set("E2b-Sandbox-Port", port)
					if key != "" {
						req.Header.Set("X-Access-Token", s.accessToken(p, "sb1"))
					}
					rec := httptest.NewRecorder()
					s.ServeHTTP(rec, req)
					return rec.Code
				},
			}, nil)
		}
	}
}
