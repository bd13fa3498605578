package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
)

// streamPath posts body to path and returns a reader of the NDJSON answer.
func (a *testAgent) streamPath(ctx context.Context, path string, body any) *eventReader {
	a.t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequestWithContext(ctx, "POST", "http://agent"+path, bytes.NewReader(b))
	resp, err := a.http.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(resp.Body)
		a.t.Fatalf("%s: status %d: %s", path, resp.StatusCode, data)
	}
	a.t.Cleanup(func() { resp.Body.Close() })
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	return &eventReader{t: a.t, resp: resp, sc: sc}
}
