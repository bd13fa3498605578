package sdk

import (
	"context"
	"io"
	"os"
)

// SandboxHandle is a Client bound to one sandbox, for code that works on a
// single sandbox. It holds no state of its own; the sandbox is looked up by
// id or name on every call.
type SandboxHandle struct {
	c        *Client
	idOrName string
}

// Sandbox returns a handle on the sandbox with this id or name. It makes no
// request; a missing sandbox shows up as a not-found error on first use.
func (c *Client) Sandbox(idOrName string) *SandboxHandle {
	return &SandboxHandle{c: c, idOrName: idOrName}
}

// ID returns the id or name the handle was made with.
func (h *SandboxHandle) ID() string { return h.idOrName }

// Get is Client.GetSandbox on this sandbox.
func (h *SandboxHandle) Get(ctx context.Context) (*Sandbox, error) {
	return h.c.GetSandbox(ctx, h.idOrName)
}

// Start is Client.StartSandbox on this sandbox.
func (h *SandboxHandle) Start(ctx context.Context) (*Sandbox, error) {
	return h.c.StartSandbox(ctx, h.idOrName)
}

// Stop is Client.StopSandbox on this sandbox.
func (h *SandboxHandle) Stop(ctx context.Context, opts StopOptions) (*Sandbox, error) {
	return h.c.StopSandbox(ctx, h.idOrName, opts)
}

// Delete is Client.DeleteSandbox on this sandbox.
func (h *SandboxHandle) Delete(ctx context.Context, wait bool) error {
	return h.c.DeleteSandbox(ctx, h.idOrName, wait)
}

// Exec is Client.Exec on this sandbox.
func (h *SandboxHandle) Exec(ctx context.Context, req ExecRequest) (*ExecResult, error) {
	return h.c.Exec(ctx, h.idOrName, req)
}

// ExecStream is Client.ExecStream on this sandbox.
func (h *SandboxHandle) ExecStream(ctx context.Context, req ExecRequest, stdout, stderr io.Writer) (*ExecResult, error) {
	return h.c.ExecStream(ctx, h.idOrName, req, stdout, stderr)
}

// Upload is Client.Upload on this sandbox.
func (h *SandboxHandle) Upload(ctx context.Context, path string, r io.Reader, mode os.FileMode, opts ...FileOption) (*FileInfo, error) {
	return h.c.Upload(ctx, h.idOrName, path, r, mode, opts...)
}

// Download is Client.Download on this sandbox.
func (h *SandboxHandle) Download(ctx context.Context, path string) (io.ReadCloser, error) {
	return h.c.Download(ctx, h.idOrName, path)
}

// ListFiles is Client.ListFiles on this sandbox.
func (h *SandboxHandle) ListFiles(ctx context.Context, path string) ([]FileInfo, error) {
	return h.c.ListFiles(ctx, h.idOrName, path)
}

// StatFile is Client.StatFile on this sandbox.
func (h *SandboxHandle) StatFile(ctx context.Context, path string) (*FileInfo, error) {
	return h.c.StatFile(ctx, h.idOrName, path)
}

// Mkdir is Client.Mkdir on this sandbox.
func (h *SandboxHandle) Mkdir(ctx context.Context, req MkdirRequest) (*FileInfo, error) {
	return h.c.Mkdir(ctx, h.idOrName, req)
}

// Move is Client.Move on this sandbox.
func (h *SandboxHandle) Move(ctx context.Context, req MoveRequest) (*FileInfo, error) {
	return h.c.Move(ctx, h.idOrName, req)
}

// RemoveFile is Client.RemoveFile on this sandbox.
func (h *SandboxHandle) RemoveFile(ctx context.Context, path string, recursive bool) error {
	return h.c.RemoveFile(ctx, h.idOrName, path, recursive)
}
