package daytona

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// FuzzSocketIOFrames sends hostile text frames to the socket.io endpoint
// over a real WebSocket, then a ping. Whatever the frames say, the server
// stays up and answers the ping, and no frame connects the client unless it
// is a CONNECT carrying the API key as its token.
//
//	go test -run '^$' -fuzz '^FuzzSocketIOFrames$' -fuzztime 1m ./internal/compat/daytona/
func FuzzSocketIOFrames(f *testing.F) {
	for _, s := range []string{
		`40{"token":"k3y"}`, `40{"token":"wrong"}`, `40`, `40{"token":["k3y"]}`, `40/admin,{"token":"k3y"}`,
		`40{"token":"k3y"`, `40{"token":"k3y","token":"x"}`, `42["x",{}]`, `3`, `4`, ``, "\x00", `2probe`,
		`40{"Token":"K3Y"}`, strings.Repeat("4", 4096),
	} {
		f.Add(s)
	}
	h, _ := newTest()
	srv := httptest.NewServer(h)
	f.Cleanup(srv.Close)
	url := "ws" + strings.TrimPrefix(srv.URL, "http") + "/daytona/api/socket.io/?EIO=4&transport=websocket"
	f.Fuzz(func(t *testing.T, frame string) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		c, _, err := websocket.Dial(ctx, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseNow()
		if _, open, err := c.Read(ctx); err != nil || !strings.HasPrefix(string(open), "0{") {
			t.Fatalf("open packet: %q %v", open, err)
		}
		for _, s := range []string{frame, "2"} {
			if err := c.Write(ctx, websocket.MessageText, []byte(s)); err != nil {
				t.Fatal(err)
			}
		}
		// A valid CONNECT is the only thing that gets "40{sid…}".
		var auth struct{ Token string }
		valid := strings.HasPrefix(frame, "40") && json.Unmarshal([]byte(frame[2:]), &auth) == nil && auth.Token == testKey
		if frame == "41" || strings.HasPrefix(frame, "41") {
			return // the client said goodbye; the server closes
		}
		for {
			_, b, err := c.Read(ctx)
			if err != nil {
				t.Fatalf("after %q: %v", frame, err)
			}
			got := string(b)
			if strings.HasPrefix(got, `40{"sid"`) && !valid {
				t.Fatalf("frame %q connected without the key", frame)
			}
			if got == "3" {
				return
			}
		}
	})
}
