package agent

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/wire"
)

func TestExecAttachStreamsStdin(t *testing.T) {
	a := startAgent(t)
	pr, pw := io.Pipe()
	go func() {
		io.WriteString(pw, `{"shell":"read x; echo got-$x; cat; echo err >&2; exit 3"}`+"\n")
		io.WriteString(pw, "first\n") // read while the request is still open
		io.WriteString(pw, "rest of stdin\n")
		pw.Close()
	}()
	resp, err := a.client.Forward(context.Background(), agentapi.Request{Method: "POST", Path: "/exec/attach", Body: pr, ContentLength: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var stdout, stderr strings.Builder
	var exit *wire.ExecEvent
	rd := agentapi.NewReader(resp.Body, agentapi.MaxLine)
	for exit == nil {
		line, err := rd.Next()
		if err != nil {
			t.Fatalf("stream ended without exit: %v (stdout %q)", err, stdout.String())
		}
		var ev wire.ExecEvent
		json.Unmarshal(line, &ev)
		switch ev.Type {
		case "stdout":
			stdout.Write(ev.Data)
		case "stderr":
			stderr.Write(ev.Data)
		case "exit":
			exit = &ev
		}
	}
	if stdout.String() != "got-first\nrest of stdin\n" || stderr.String() != "err\n" || exit.ExitCode != 3 {
		t.Fatalf("stdout %q stderr %q exit %+v", stdout.String(), stderr.String(), exit)
	}
}

func TestExecAttachRefusesBadFirstLine(t *testing.T) {
	a := startAgent(t)
	for _, body := range []string{"not json\n", `{"shell":"true","stdin":"x"}` + "\n", `{"shell":"true"`, strings.Repeat("x", 2<<20)} {
		resp, err := a.client.Forward(context.Background(), agentapi.Request{Method: "POST", Path: "/exec/attach", Body: strings.NewReader(body), ContentLength: int64(len(body))})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("body %.20q: %d, want 400", body, resp.StatusCode)
		}
	}
}
