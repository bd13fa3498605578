package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
)

func runStreamHandler(t *testing.T, lines ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("stream") != "true" {
			t.Errorf("stream query = %q", r.URL.RawQuery)
		}
		w.Header().Set("Content-Type", "application/x-ndjson")
		for _, l := range lines {
			w.Write([]byte(l + "\n"))
		}
	}
}

func TestRunCodeStream(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/sandboxes/box/contexts/ctx-1/run", runStreamHandler(t,
		`{"type":"stdout","seq":1,"data":"aGkK"}`,
		`{"type":"stderr","seq":2,"data":"ZXJyCg=="}`,
		`{"type":"heartbeat"}`,
		`{"type":"result","result":{"main":true,"text/plain":"42","image/png":"iVBO","application/json":{"a":1}}}`,
		`{"type":"error","error":{"name":"ValueError","value":"boom","traceback":"tb"}}`,
		`{"type":"end","timedOut":true,"durationMs":7}`,
	))
	c := newTestServer(t, mux)
	var out, errb string
	var results []CodeResult
	res, err := c.RunCode(context.Background(), "box", "ctx-1", RunCodeRequest{Code: "x"}, &RunHandlers{
		Stdout: func(b []byte) { out += string(b) },
		Stderr: func(b []byte) { errb += string(b) },
		Result: func(r CodeResult) { results = append(results, r) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if out != "hi\n" || errb != "err\n" || len(results) != 1 || len(res.Results) != 1 {
		t.Fatalf("out %q err %q results %+v", out, errb, results)
	}
	r := results[0]
	if !r.Main || r.Text != "42" || string(r.PNG) != "\x89\x50\x4e" || string(r.JSON) != `{"a":1}` {
		t.Fatalf("result %+v", r)
	}
	if res.Error == nil || res.Error.Name != "ValueError" || !res.TimedOut || res.DurationMs != 7 {
		t.Fatalf("res %+v", res)
	}
}

func TestRunStreamBroken(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/sandboxes/box/run", runStreamHandler(t,
		`{"type":"stdout","seq":1,"data":"aGkK"}`,
		`{"type":"error","error":{"code":"INSTANCE_LOST","message":"gone"}}`,
	))
	mux.HandleFunc("POST /v1/sandboxes/cut/run", runStreamHandler(t, `{"type":"stdout","seq":1,"data":"aGkK"}`))
	c := newTestServer(t, mux)
	_, err := c.Run(context.Background(), "box", RunRequest{Language: "python"}, &RunHandlers{})
	var ae *APIError
	if !errors.As(err, &ae) || ae.Code != "INSTANCE_LOST" {
		t.Fatalf("broken stream: %v", err)
	}
	if _, err := c.Run(context.Background(), "cut", RunRequest{Language: "python"}, &RunHandlers{}); !errors.Is(err, ErrStreamEnded) {
		t.Fatalf("cut stream: %v", err)
	}
}

func TestContextCalls(t *testing.T) {
	mux := http.NewServeMux()
	var created CreateContextRequest
	mux.HandleFunc("POST /v1/sandboxes/box/contexts", func(w http.ResponseWriter, r *http.Request) {
		json.NewDecoder(r.Body).Decode(&created)
		writeJSON(w, http.StatusCreated, Context{ID: "ctx-1", Language: created.Language})
	})
	mux.HandleFunc("GET /v1/sandboxes/box/contexts", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, []Context{{ID: "ctx-1"}})
	})
	mux.HandleFunc("DELETE /v1/sandboxes/box/contexts/ctx-1", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /v1/sandboxes/box/contexts/gone/run", func(w http.ResponseWriter, r *http.Request) {
		writeErr(w, http.StatusNotFound, "CONTEXT_NOT_FOUND", "gone")
	})
	mux.HandleFunc("POST /v1/sandboxes/box/contexts/ctx-1/run", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, RunResult{Stdout: "out", Results: []CodeResult{{Main: true, Text: "2"}}})
	})
	c := newTestServer(t, mux).Sandbox("box")
	ctx := context.Background()
	zero := 0
	cx, err := c.CreateContext(ctx, CreateContextRequest{Language: "bash", IdleSeconds: &zero})
	if err != nil || cx.ID != "ctx-1" || created.IdleSeconds == nil || *created.IdleSeconds != 0 {
		t.Fatalf("create: %+v %v (sent %+v)", cx, err, created)
	}
	if list, err := c.c.ListContexts(ctx, "box"); err != nil || len(list) != 1 {
		t.Fatalf("list: %+v %v", list, err)
	}
	if err := c.c.DeleteContext(ctx, "box", "ctx-1"); err != nil {
		t.Fatal(err)
	}
	if res, err := c.RunCode(ctx, "ctx-1", RunCodeRequest{Code: "1+1"}, nil); err != nil || res.Stdout != "out" || res.Results[0].Text != "2" {
		t.Fatalf("run: %+v %v", res, err)
	}
	if _, err := c.RunCode(ctx, "gone", RunCodeRequest{Code: "1"}, nil); !IsNotFound(err) {
		t.Fatalf("gone: %v", err)
	}
	if _, err := c.RunCode(ctx, "", RunCodeRequest{}, nil); err == nil {
		t.Fatal("empty context id accepted")
	}
}
