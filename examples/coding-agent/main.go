// Command coding-agent is a coding agent's loop over sbx's MCP server: it
// clones a repository into a sandbox, reads the code, runs the tests, reads
// the failure, edits the code, runs the tests again and commits the fix.
//
// Every action is an MCP tool call, made with the official Go SDK's client
// to sbx serve's /mcp (or, with -stdio, to `sbx mcp`). What a model would
// decide — the next tool call, given what the calls so far returned — is a
// scripted list here; Model is where a real model plugs in.
//
//	SBX_HOST=http://127.0.0.1:7423 SBX_TOKEN=… go run ./examples/coding-agent -repo https://github.com/you/calc.git
//
// See README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/exec"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sbxhq/sbx/sdk"
)

func main() {
	repo := flag.String("repo", "", "the git repository to work on (any URL the sandbox can reach: https://…, file://…)")
	name := flag.String("sandbox", "coding-agent", "the sandbox to work in, by name: created if missing, kept afterwards")
	stdio := flag.Bool("stdio", false, "talk to `sbx mcp` over stdio instead of the daemon's /mcp")
	flag.Parse()
	log.SetFlags(0)
	if *repo == "" {
		log.Fatal("coding-agent: -repo is required")
	}
	if err := run(context.Background(), *repo, *name, *stdio); err != nil {
		log.Fatalf("coding-agent: %v", err)
	}
}

// Call is one tool call a model asks for.
type Call struct {
	Tool string
	Args map[string]any
	Why  string // the model's reason, printed in the transcript
}

// Turn is a call and what it returned.
type Turn struct {
	Call    Call
	Result  string
	IsError bool
}

// Model decides the next call from the task, the tools and the turns so
// far; done when the task is finished. Plug a real model in here: send it
// the task, the tools' names, descriptions and input schemas (as they come
// from tools/list) and the turns, and turn its answer into a Call.
type Model interface {
	Next(ctx context.Context, task string, tools []*mcp.Tool, turns []Turn) (next Call, done bool, err error)
}

func run(ctx context.Context, repo, name string, stdio bool) error {
	session, err := connect(ctx, stdio)
	if err != nil {
		return err
	}
	defer session.Close()
	tools, err := session.ListTools(ctx, nil)
	if err != nil {
		return err
	}
	task := "Clone " + repo + ", make its tests pass, and commit the fix."
	var model Model = &scripted{repo: repo, sandbox: name}
	var turns []Turn
	for {
		call, done, err := model.Next(ctx, task, tools.Tools, turns)
		if err != nil {
			return err
		}
		if done {
			fmt.Println("done:", call.Why)
			return nil
		}
		fmt.Printf("> %s %v\n  (%s)\n", call.Tool, call.Args, call.Why)
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: call.Tool, Arguments: call.Args})
		if err != nil {
			return fmt.Errorf("%s: %w", call.Tool, err)
		}
		turn := Turn{Call: call, Result: textOf(res), IsError: res.IsError}
		fmt.Println(indent(turn.Result))
		turns = append(turns, turn)
	}
}

// connect opens the MCP session: the daemon's /mcp with the API key as the
// bearer token, or `sbx mcp` as a subprocess; both find the daemon and key
// as the sbx CLI does (SBX_HOST, SBX_TOKEN).
func connect(ctx context.Context, stdio bool) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "coding-agent", Version: "0.1"}, nil)
	if stdio {
		return client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command("sbx", "mcp")}, nil)
	}
	host := os.Getenv("SBX_HOST")
	if host == "" {
		host = sdk.DefaultHost
	}
	key, err := sdk.TokenFromEnv()
	if err != nil {
		return nil, err
	}
	hc := &http.Client{Transport: bearer{key}}
	return client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: strings.TrimRight(host, "/") + "/mcp", HTTPClient: hc}, nil)
}

type bearer struct{ key string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

// scripted is the stand-in for a model: the calls a model would make on
// the example repository (examples/coding-agent/README.md), each checked
// against what the previous calls returned, as a model would read them.
type scripted struct {
	repo, sandbox string
}

func (s *scripted) Next(_ context.Context, _ string, _ []*mcp.Tool, turns []Turn) (Call, bool, error) {
	dir := "/workspace/calc"
	sb := s.sandbox
	steps := []struct {
		call    Call
		check   func(Turn) error // what the model reads in the answer
		mayFail string           // an error the model shrugs off
	}{
		{Call{"sandbox_get_or_create", map[string]any{"name": sb, "autoStopSeconds": 900}, "one sandbox for this task, kept by name"}, nil, ""},
		{Call{"file_delete", map[string]any{"sandbox": sb, "path": dir, "recursive": true}, "start from a fresh clone"}, nil, "FILE_NOT_FOUND"},
		{Call{"git_clone", map[string]any{"sandbox": sb, "url": s.repo, "path": dir}, "get the code"}, nil, ""},
		{Call{"file_list", map[string]any{"sandbox": sb, "path": dir}, "see what is there"}, nil, ""},
		{Call{"file_read", map[string]any{"sandbox": sb, "path": dir + "/add.sh"}, "read the code under test"}, nil, ""},
		{Call{"command_run", map[string]any{"sandbox": sb, "cwd": dir, "shell": "sh test.sh", "timeoutSeconds": 30}, "run the tests"},
			func(t Turn) error { return want(t, "exit code: 1", "FAIL") }, ""},
		// The failure says add.sh subtracts: a model would write this edit.
		{Call{"file_edit", map[string]any{"sandbox": sb, "path": dir + "/add.sh", "old": "$(($1 - $2))", "new": "$(($1 + $2))"}, "the test says 2+3 gave -1: add.sh subtracts"}, nil, ""},
		{Call{"command_run", map[string]any{"sandbox": sb, "cwd": dir, "shell": "sh test.sh", "timeoutSeconds": 30}, "run the tests again"},
			func(t Turn) error { return want(t, "exit code: 0", "ok") }, ""},
		{Call{"git_commit", map[string]any{"sandbox": sb, "path": dir, "message": "add.sh: add instead of subtracting", "addAll": true,
			"authorName": "coding-agent", "authorEmail": "agent@example.com"}, "keep the fix"}, nil, ""},
		{Call{"git_status", map[string]any{"sandbox": sb, "path": dir}, "check that nothing is left uncommitted"},
			func(t Turn) error { return want(t, `"clean": true`) }, ""},
	}
	if n := len(turns); n > 0 {
		last := turns[n-1]
		if last.IsError && (steps[n-1].mayFail == "" || !strings.Contains(last.Result, steps[n-1].mayFail)) {
			return Call{}, false, fmt.Errorf("%s failed: %s", last.Call.Tool, last.Result)
		}
		if check := steps[n-1].check; check != nil && !last.IsError {
			if err := check(last); err != nil {
				return Call{}, false, err
			}
		}
	}
	if len(turns) == len(steps) {
		return Call{Why: "the tests pass and the fix is committed"}, true, nil
	}
	return steps[len(turns)].call, false, nil
}

func want(t Turn, parts ...string) error {
	for _, p := range parts {
		if !strings.Contains(t.Result, p) {
			return errors.New("unexpected answer of " + t.Call.Tool + ": " + t.Result)
		}
	}
	return nil
}

// textOf is the text of a tool result.
func textOf(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ")
}
