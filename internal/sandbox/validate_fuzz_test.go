package sandbox

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// FuzzValidateName checks ValidateName against the rule as the API documents
// it, written out without a regular expression: 1 to 63 characters of a-z,
// 0-9 and '-', starting with a letter or digit, not starting with "sbx-".
// Every refusal is an INVALID_NAME error that quotes the name.
//
//	go test -run '^$' -fuzz '^FuzzValidateName$' -fuzztime 1m ./internal/sandbox/
func FuzzValidateName(f *testing.F) {
	for _, s := range []string{
		"a", "web-1", "0", "-a", "a-", "sbx-x", "sbx", "sbx-", "Sbx-x", "UPPER", "a_b", "a.b", "a/b",
		"", " ", "a\n", "a\x00", "é", strings.Repeat("a", 63), strings.Repeat("a", 64),
		"../x", "..", "a--b", "\u212a", // KELVIN SIGN folds to k
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		err := ValidateName(name)
		if want := nameOK(name); (err == nil) != want {
			t.Fatalf("ValidateName(%q) = %v, want ok=%v", name, err, want)
		}
		if err != nil && (errdefs.CodeOf(err) != "INVALID_NAME" || !errdefs.Is(err, errdefs.KindInvalid)) {
			t.Fatalf("ValidateName(%q) gave %v, want an Invalid INVALID_NAME error", name, err)
		}
	})
}

func nameOK(name string) bool {
	if len(name) < 1 || len(name) > 63 || strings.HasPrefix(name, "sbx-") {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '-' && i > 0:
		default:
			return false
		}
	}
	return true
}

// FuzzValidateCreate decodes arbitrary JSON into a create request and
// validates it: no panic, every refusal an Invalid error with a code, and an
// accepted request within the documented limits.
func FuzzValidateCreate(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"name":"a","cpu":0.5,"memoryMiB":64,"pidsLimit":64,"diskMiB":32}`,
		`{"cpu":1e308}`, `{"cpu":-0}`, `{"cpu":0.001}`, `{"memoryMiB":15}`, `{"memoryMiB":9007199254740993}`,
		`{"pidsLimit":-1}`, `{"diskMiB":1}`, `{"diskMiB":-5}`, `{"workdir":"/a/../b"}`, `{"workdir":"/"}`,
		`{"env":{"A":"b","1":"x"}}`, `{"env":{"A":"\u0000"}}`, `{"labels":{"k":"v\n"}}`, `{"labels":{"":"v"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var req wire.CreateSandboxRequest
		if json.Unmarshal(body, &req) != nil {
			return
		}
		err := validateCreate(&req)
		if err != nil {
			if !errdefs.Is(err, errdefs.KindInvalid) || errdefs.CodeOf(err) == "" {
				t.Fatalf("validateCreate(%s) = %v, want an Invalid error with a code", body, err)
			}
			return
		}
		switch {
		case req.Name != "" && !nameOK(req.Name):
			t.Fatalf("accepted name %q", req.Name)
		case req.CPU < 0 || req.CPU > maxCPU || (req.CPU != 0 && req.CPU < 0.01):
			t.Fatalf("accepted cpu %g", req.CPU)
		case req.MemoryMiB < 0 || req.MemoryMiB > maxMemoryMiB || (req.MemoryMiB != 0 && req.MemoryMiB < minMemoryMiB):
			t.Fatalf("accepted memoryMiB %d", req.MemoryMiB)
		case req.PidsLimit < 0 || req.PidsLimit > maxPids || (req.PidsLimit != 0 && req.PidsLimit < minPids):
			t.Fatalf("accepted pidsLimit %d", req.PidsLimit)
		case req.DiskMiB < 0 || req.DiskMiB > maxDiskMiB || (req.DiskMiB != 0 && req.DiskMiB < minDiskMiB):
			t.Fatalf("accepted diskMiB %d", req.DiskMiB)
		case req.Workdir != "" && (!strings.HasPrefix(req.Workdir, "/") || strings.Contains(req.Workdir, "/../") || strings.HasSuffix(req.Workdir, "/..") || strings.ContainsRune(req.Workdir, 0)):
			t.Fatalf("accepted workdir %q", req.Workdir)
		}
		for k, v := range req.Env {
			if k == "" || strings.ContainsAny(k, "=\x00") || strings.ContainsRune(v, 0) {
				t.Fatalf("accepted env %q=%q", k, v)
			}
		}
		for k, v := range req.Labels {
			if k == "" || strings.ContainsAny(v, "\x00\n") {
				t.Fatalf("accepted label %q=%q", k, v)
			}
		}
	})
}
