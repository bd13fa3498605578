package mcp

import (
	"context"
	"fmt"
	"strings"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sbxhq/sbx/sdk"
	"github.com/sbxhq/sbx/wire"
)

// CodeInput is code_run's input.
type CodeInput struct {
	Target
	Language       string            `json:"language,omitempty" jsonschema:"python (default), javascript, bash, …; ignored with context"`
	Code           string            `json:"code" jsonschema:"the code to run"`
	Context        string            `json:"context,omitempty" jsonschema:"a context id from code_context_create: variables and imports persist between runs; empty: a fresh interpreter for this run"`
	TimeoutSeconds float64           `json:"timeoutSeconds,omitempty" jsonschema:"stop the run after this many seconds; 0 no limit"`
	Env            map[string]string `json:"env,omitempty" jsonschema:"environment variables for this run"`
	MaxBytes       int               `json:"maxBytes,omitempty" jsonschema:"byte budget of each text output; default 20000"`
}

// ContextInput is code_context_create's input.
type ContextInput struct {
	Target
	wire.CreateContextRequest
}

func (r registry) codeTools() {
	tool(r, "code_context_create", "Start an interpreter (a context) in a sandbox whose state persists across code_run calls, like a notebook kernel.", true,
		map[string]string{"language": "python, javascript, bash, …", "cwd": "working directory", "env": "environment variables", "contextIdleSeconds": "end it after this many idle seconds"},
		func(ctx context.Context, c *sdk.Client, in ContextInput) (*gomcp.CallToolResult, error) {
			return jsonResult(c.CreateContext(ctx, in.Sandbox, in.CreateContextRequest))
		})
	tool(r, "code_run", "Run code in a sandbox's interpreter and return its output: stdout, stderr, the value of the last expression, and rich results (charts as PNG images, HTML tables).", true, nil,
		func(ctx context.Context, c *sdk.Client, in CodeInput) (*gomcp.CallToolResult, error) {
			var res *wire.RunResult
			var err error
			if in.Context != "" {
				res, err = c.RunCode(ctx, in.Sandbox, in.Context, wire.RunCodeRequest{Code: in.Code, TimeoutSeconds: in.TimeoutSeconds, Env: in.Env}, nil)
			} else {
				lang := in.Language
				if lang == "" {
					lang = "python"
				}
				res, err = c.Run(ctx, in.Sandbox, wire.RunRequest{Language: lang, Code: in.Code, TimeoutSeconds: in.TimeoutSeconds, Env: in.Env}, nil)
			}
			if err != nil {
				return nil, err
			}
			return codeResult(res, budget(in.MaxBytes)), nil
		})
}

// codeResult turns a run into content: one text block of its streams and
// error, then each rich result as an image or a text block of its type.
func codeResult(res *wire.RunResult, max int) *gomcp.CallToolResult {
	var b strings.Builder
	for _, s := range []struct{ name, out string }{{"stdout", res.Stdout}, {"stderr", res.Stderr}} {
		if s.out == "" {
			continue
		}
		kept, left := cut(s.out, max)
		fmt.Fprintf(&b, "--- %s ---\n%s\n", s.name, kept)
		if left > 0 {
			fmt.Fprintf(&b, "[truncated at maxBytes %d: the last %d bytes of %s are left out; write large output to a file and read it with file_read]\n", max, left, s.name)
		}
	}
	if res.Truncated {
		b.WriteString("[the daemon cut the output at its own limit]\n")
	}
	if res.TimedOut {
		b.WriteString("[timed out]\n")
	}
	out := &gomcp.CallToolResult{}
	if e := res.Error; e != nil {
		out.IsError = true
		fmt.Fprintf(&b, "--- error ---\n%s%s: %s %s\n%s\n", e.Code, e.Name, e.Value, e.Message, e.Traceback)
	}
	out.Content = append(out.Content, &gomcp.TextContent{Text: b.String()})
	for _, r := range res.Results {
		switch {
		case len(r.PNG) > 0:
			out.Content = append(out.Content, &gomcp.ImageContent{Data: r.PNG, MIMEType: "image/png"})
		case len(r.JPEG) > 0:
			out.Content = append(out.Content, &gomcp.ImageContent{Data: r.JPEG, MIMEType: "image/jpeg"})
		case r.HTML != "":
			out.Content = append(out.Content, richText("text/html", r.HTML, max))
		case r.SVG != "":
			out.Content = append(out.Content, richText("image/svg+xml", r.SVG, max))
		case r.Markdown != "":
			out.Content = append(out.Content, richText("text/markdown", r.Markdown, max))
		case len(r.JSON) > 0:
			out.Content = append(out.Content, richText("application/json", string(r.JSON), max))
		case r.Text != "":
			out.Content = append(out.Content, richText("text/plain", r.Text, max))
		}
	}
	return out
}

func richText(mime, s string, max int) gomcp.Content {
	kept, left := cut(s, max)
	if left > 0 {
		kept += fmt.Sprintf("\n[truncated at maxBytes %d: %d more bytes]", max, left)
	}
	return &gomcp.TextContent{Text: "result (" + mime + "):\n" + kept}
}
