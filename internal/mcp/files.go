package mcp

import (
	"context"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sbxhq/sbx/sdk"
	"github.com/sbxhq/sbx/wire"
)

// maxEditBytes bounds the file file_edit reads and writes back whole.
const maxEditBytes = 8 << 20

// PathInput names a file of a sandbox.
type PathInput struct {
	Target
	Path string `json:"path" jsonschema:"absolute path inside the sandbox, or relative to its workdir"`
}

// ReadInput is file_read's input.
type ReadInput struct {
	PathInput
	Offset int64 `json:"offset,omitempty" jsonschema:"byte offset to start at; a truncated read names the next one"`
	Limit  int   `json:"limit,omitempty" jsonschema:"bytes to read at most; default and cap maxBytes"`
	// MaxBytes is the budget; Limit within it.
	MaxBytes int `json:"maxBytes,omitempty" jsonschema:"byte budget; default 20000"`
}

// WriteInput is file_write's input.
type WriteInput struct {
	PathInput
	Content string `json:"content" jsonschema:"the file's whole new content"`
}

// EditInput is file_edit's input.
type EditInput struct {
	PathInput
	Old        string `json:"old" jsonschema:"the exact text to replace; it must occur exactly once unless replaceAll"`
	New        string `json:"new" jsonschema:"the text to put in its place"`
	ReplaceAll bool   `json:"replaceAll,omitempty" jsonschema:"replace every occurrence"`
}

// ListFilesInput is file_list's input.
type ListFilesInput struct {
	PathInput
	Depth int `json:"depth,omitempty" jsonschema:"levels to list: 1 (default) the directory's own entries, 2 adds its subdirectories' entries, …"`
}

// SearchInput is file_search's input.
type SearchInput struct {
	PathInput
	Pattern  string `json:"pattern" jsonschema:"text to find in files under path"`
	Regex    bool   `json:"regex,omitempty" jsonschema:"pattern is a regular expression (RE2, as Go's regexp) instead of plain text"`
	MaxBytes int    `json:"maxBytes,omitempty" jsonschema:"byte budget of the matches; default 20000"`
}

// DeleteInput is file_delete's input.
type DeleteInput struct {
	PathInput
	Recursive bool `json:"recursive,omitempty" jsonschema:"delete a non-empty directory with everything in it"`
}

// MoveInput is file_move's input.
type MoveInput struct {
	Target
	wire.MoveRequest
}

func (r registry) fileTools() {
	tool(r, "file_read", "Read a text file of a sandbox, maxBytes at a time from offset; a truncated read says the offset to continue from.", false, nil,
		func(ctx context.Context, c *sdk.Client, in ReadInput) (*gomcp.CallToolResult, error) {
			return readFile(ctx, c, in)
		})
	tool(r, "file_write", "Write a file of a sandbox (created with its parent directories, or replaced whole).", true, nil,
		func(ctx context.Context, c *sdk.Client, in WriteInput) (*gomcp.CallToolResult, error) {
			fi, err := c.Upload(ctx, in.Sandbox, in.Path, strings.NewReader(in.Content), 0)
			if err != nil {
				return nil, err
			}
			return text(fmt.Sprintf("wrote %d bytes to %s", fi.Size, fi.Path)), nil
		})
	tool(r, "file_edit", "Edit a file of a sandbox by replacing a unique piece of text (old) with new. Fails without changing anything when old occurs zero or several times (unless replaceAll).", true, nil,
		func(ctx context.Context, c *sdk.Client, in EditInput) (*gomcp.CallToolResult, error) {
			return editFile(ctx, c, in)
		})
	tool(r, "file_list", "List a directory of a sandbox: name, type, size, mode, modification time.", false, nil,
		func(ctx context.Context, c *sdk.Client, in ListFilesInput) (*gomcp.CallToolResult, error) {
			var opts []sdk.ListOption
			if in.Depth > 0 {
				opts = append(opts, sdk.WithDepth(in.Depth))
			}
			return jsonResult(c.ListFiles(ctx, in.Sandbox, in.Path, opts...))
		})
	tool(r, "file_search", "Search the files under a path of a sandbox for text, as grep -rn does: returns file:line:text for each match.", false, nil,
		func(ctx context.Context, c *sdk.Client, in SearchInput) (*gomcp.CallToolResult, error) {
			return searchFiles(ctx, c, in)
		})
	tool(r, "file_delete", "Delete a file or (recursive) a directory of a sandbox.", true, nil,
		func(ctx context.Context, c *sdk.Client, in DeleteInput) (*gomcp.CallToolResult, error) {
			if err := c.RemoveFile(ctx, in.Sandbox, in.Path, in.Recursive); err != nil {
				return nil, err
			}
			return text("deleted " + in.Path), nil
		})
	tool(r, "file_move", "Move or rename a file or directory of a sandbox.", true,
		map[string]string{"from": "the path to move", "to": "its new path", "overwrite": "replace what is at to"},
		func(ctx context.Context, c *sdk.Client, in MoveInput) (*gomcp.CallToolResult, error) {
			return jsonResult(c.Move(ctx, in.Sandbox, in.MoveRequest))
		})
}

func readFile(ctx context.Context, c *sdk.Client, in ReadInput) (*gomcp.CallToolResult, error) {
	if in.Offset < 0 || in.Limit < 0 {
		return nil, errorf("offset and limit must not be negative")
	}
	max := budget(in.MaxBytes)
	if in.Limit > 0 && in.Limit < max {
		max = in.Limit
	}
	fi, err := c.StatFile(ctx, in.Sandbox, in.Path)
	if err != nil {
		return nil, err
	}
	if fi.Type == "dir" {
		return nil, errorf("%s is a directory: list it with file_list", in.Path)
	}
	body, err := c.Download(ctx, in.Sandbox, in.Path)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	if _, err := io.CopyN(io.Discard, body, in.Offset); err != nil && err != io.EOF {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(body, int64(max)+1))
	if err != nil {
		return nil, err
	}
	kept, left := cut(string(b), max)
	// An offset may fall inside a character: up to 3 bytes of one.
	if head := strings.TrimLeftFunc(kept[:min(3, len(kept))], isContinuation); !utf8.ValidString(head + kept[min(3, len(kept)):]) {
		return nil, errorf("%s is not text (%d bytes); copy it out with sbx cp or process it with a command", in.Path, fi.Size)
	}
	var note string
	if left > 0 {
		next := in.Offset + int64(len(kept))
		note = fmt.Sprintf("\n[truncated: bytes %d-%d of %d shown; continue with offset %d]", in.Offset, next, fi.Size, next)
	}
	return text(kept + note), nil
}

func isContinuation(r rune) bool { return r == utf8.RuneError }

func editFile(ctx context.Context, c *sdk.Client, in EditInput) (*gomcp.CallToolResult, error) {
	if in.Old == "" {
		return nil, errorf("old must not be empty: name the text to replace")
	}
	body, err := c.Download(ctx, in.Sandbox, in.Path)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(body, maxEditBytes+1))
	body.Close()
	if err != nil {
		return nil, err
	}
	if len(b) > maxEditBytes {
		return nil, errorf("%s is over %d bytes: edit it with a command (sed) instead", in.Path, maxEditBytes)
	}
	content := string(b)
	n := strings.Count(content, in.Old)
	switch {
	case n == 0:
		return nil, errorf("old text not found in %s; read the file (file_read) and copy the text exactly", in.Path)
	case n > 1 && !in.ReplaceAll:
		return nil, errorf("old text occurs %d times in %s; add surrounding lines to make it unique, or set replaceAll", n, in.Path)
	}
	content = strings.ReplaceAll(content, in.Old, in.New)
	if _, err := c.Upload(ctx, in.Sandbox, in.Path, strings.NewReader(content), 0); err != nil {
		return nil, err
	}
	return text(fmt.Sprintf("replaced %d occurrence(s) in %s", n, in.Path)), nil
}

func searchFiles(ctx context.Context, c *sdk.Client, in SearchInput) (*gomcp.CallToolResult, error) {
	if in.Pattern == "" {
		return nil, errorf("pattern must not be empty")
	}
	path := in.Path
	if path == "" {
		path = "."
	}
	res, err := c.Grep(ctx, in.Sandbox, wire.GrepRequest{Path: path, Pattern: in.Pattern, Regex: in.Regex})
	if err != nil {
		return nil, err
	}
	if len(res.Matches) == 0 {
		return text("no matches"), nil
	}
	var b strings.Builder
	for _, m := range res.Matches {
		fmt.Fprintf(&b, "%s:%d:%s\n", m.File, m.Line, m.Content)
	}
	max := budget(in.MaxBytes)
	kept, left := cut(b.String(), max)
	switch {
	case left > 0:
		kept += fmt.Sprintf("\n[truncated at maxBytes %d: %d more bytes of matches; narrow path or pattern]", max, left)
	case res.Truncated:
		kept += fmt.Sprintf("\n[stopped at %d matches; narrow path or pattern]", len(res.Matches))
	}
	return text(kept), nil
}
