package e2b

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/compat/e2b/envdpb/filesystempb/filesystempbconnect"
	"github.com/sbxhq/sbx/internal/compat/e2b/envdpb/processpb/processpbconnect"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// envdProcedures is every envd RPC a client can call.
var envdProcedures = []string{
	processpbconnect.ProcessListProcedure, processpbconnect.ProcessConnectProcedure, processpbconnect.ProcessStartProcedure,
	processpbconnect.ProcessUpdateProcedure, processpbconnect.ProcessStreamInputProcedure, processpbconnect.ProcessSendInputProcedure,
	processpbconnect.ProcessSendSignalProcedure,
	filesystempbconnect.FilesystemStatProcedure, filesystempbconnect.FilesystemMakeDirProcedure, filesystempbconnect.FilesystemMoveProcedure,
	filesystempbconnect.FilesystemListDirProcedure, filesystempbconnect.FilesystemRemoveProcedure, filesystempbconnect.FilesystemWatchDirProcedure,
	filesystempbconnect.FilesystemCreateWatcherProcedure, filesystempbconnect.FilesystemGetWatcherEventsProcedure,
	filesystempbconnect.FilesystemRemoveWatcherProcedure,
}

// touchRecorder answers every sandbox lookup with "unavailable" and
// remembers which sandbox each one named.
type touchRecorder struct {
	fakeSandboxes
	named []string
}

func (f *touchRecorder) Get(_ context.Context, id string) (*store.Sandbox, error) {
	f.named = append(f.named, id)
	return nil, errdefs.Unavailable(wire.CodeSandboxUnavailable, "sandbox %s is not running", id)
}

func (f *touchRecorder) Agent(_ context.Context, id string) (*agentapi.Client, *store.Sandbox, error) {
	f.named = append(f.named, id)
	return nil, nil, errdefs.Unavailable(wire.CodeSandboxUnavailable, "sandbox %s is not running", id)
}

// FuzzEnvdConnect sends hostile Connect-RPC requests (any procedure, any
// content type, any body: framed envelopes or not) to envd. It never
// panics, every refusal is a Connect error (a JSON body with a code, or an
// end-of-stream envelope), and the only sandbox it ever looks up is the one
// the request was authorised for, whatever the body names.
//
//	go test -run '^$' -fuzz '^FuzzEnvdConnect$' -fuzztime 1m ./internal/compat/e2b/
func FuzzEnvdConnect(f *testing.F) {
	envelope := func(flags byte, msg string) []byte {
		b := make([]byte, 5, 5+len(msg))
		b[0] = flags
		binary.BigEndian.PutUint32(b[1:], uint32(len(msg)))
		return append(b, msg...)
	}
	f.Add(uint8(0), uint8(0), []byte(`{}`))
	f.Add(uint8(2), uint8(2), envelope(0, `{"process":{"cmd":"/bin/sh","args":["-c","id"]}}`))
	f.Add(uint8(7), uint8(1), []byte{0x0a, 0x03, '/', 'e', 't'})
	f.Add(uint8(12), uint8(2), envelope(1, "\x1f\x8b garbage"))
	f.Add(uint8(4), uint8(3), append(envelope(0, `{}`), 0xff, 0xff, 0xff, 0xff, 0xff))
	f.Add(uint8(9), uint8(0), []byte(`{"path":"../../etc/shadow","sandboxId":"other"}`))
	contentTypes := []string{"application/json", "application/proto", "application/connect+json", "application/connect+proto", "text/plain"}
	f.Fuzz(func(t *testing.T, proc, ctype uint8, body []byte) {
		f := &touchRecorder{}
		s := newTestServer(&f.fakeSandboxes)
		s.sandboxes = f
		r := httptest.NewRequest("POST", envdProcedures[int(proc)%len(envdProcedures)], strings.NewReader(string(body)))
		r.Header.Set("Content-Type", contentTypes[int(ctype)%len(contentTypes)])
		r.Header.Set("Connect-Protocol-Version", "1")
		r.Header.Set(sandboxHeader, "sbx-mine")
		w := httptest.NewRecorder()
		s.envdHandler().ServeHTTP(w, r)
		for _, id := range f.named {
			if id != "sbx-mine" {
				t.Fatalf("%s looked up sandbox %q, not the request's", r.URL.Path, id)
			}
		}
		if w.Code == 200 || w.Code == 415 { // a stream's errors end it; 415 is an unknown content type
			return
		}
		var e struct{ Code string }
		if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Code == "" {
			t.Fatalf("%s answered %d with %q: not a Connect error", r.URL.Path, w.Code, w.Body)
		}
	})
}
