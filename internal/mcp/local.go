package mcp

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sbxhq/sbx/sdk"
)

// CopyInput is file_upload's and file_download's input.
type CopyInput struct {
	Target
	LocalPath string `json:"localPath" jsonschema:"a file on the machine running sbx mcp (relative: to its working directory)"`
	Path      string `json:"path" jsonschema:"the file inside the sandbox"`
}

// localFileTools copy files between the machine `sbx mcp` runs on and a
// sandbox, streamed, never through the model's context.
func (r registry) localFileTools() {
	tool(r, "file_upload", "Copy a file from this machine (where the MCP client runs) into a sandbox, parent directories created. The content never passes through the conversation.", true, nil,
		func(ctx context.Context, c *sdk.Client, in CopyInput) (*gomcp.CallToolResult, error) {
			f, err := os.Open(in.LocalPath)
			if err != nil {
				return nil, errorf("open %s on this machine: %v", in.LocalPath, err)
			}
			defer f.Close()
			st, err := f.Stat()
			if err != nil {
				return nil, err
			}
			if st.IsDir() {
				return nil, errorf("%s is a directory; upload its files one by one, or use sbx cp -r", in.LocalPath)
			}
			fi, err := c.Upload(ctx, in.Sandbox, in.Path, f, st.Mode().Perm())
			if err != nil {
				return nil, err
			}
			return text(fmt.Sprintf("uploaded %s (%d bytes) to %s", in.LocalPath, fi.Size, fi.Path)), nil
		})
	tool(r, "file_download", "Copy a file of a sandbox to this machine (where the MCP client runs), replacing what is at localPath. The content never passes through the conversation.", true, nil,
		func(ctx context.Context, c *sdk.Client, in CopyInput) (*gomcp.CallToolResult, error) {
			body, err := c.Download(ctx, in.Sandbox, in.Path)
			if err != nil {
				return nil, err
			}
			defer body.Close()
			// A temporary file renamed into place: a failed copy leaves no half file.
			tmp, err := os.CreateTemp(filepath.Dir(in.LocalPath), ".sbx-download-*")
			if err != nil {
				return nil, errorf("write to %s on this machine: %v", filepath.Dir(in.LocalPath), err)
			}
			defer os.Remove(tmp.Name())
			n, err := io.Copy(tmp, body)
			if cerr := tmp.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return nil, err
			}
			if err := os.Rename(tmp.Name(), in.LocalPath); err != nil {
				return nil, errorf("write %s on this machine: %v", in.LocalPath, err)
			}
			return text(fmt.Sprintf("downloaded %s (%d bytes) to %s", in.Path, n, in.LocalPath)), nil
		})
}
