package sdk

import (
	"context"
	"io"
	"time"
)

// StartProcess is Client.StartProcess on this sandbox.
func (h *SandboxHandle) StartProcess(ctx context.Context, req StartProcessRequest) (*Process, error) {
	return h.c.StartProcess(ctx, h.idOrName, req)
}

// ListProcesses is Client.ListProcesses on this sandbox.
func (h *SandboxHandle) ListProcesses(ctx context.Context) ([]Process, error) {
	return h.c.ListProcesses(ctx, h.idOrName)
}

// GetProcess is Client.GetProcess on this sandbox.
func (h *SandboxHandle) GetProcess(ctx context.Context, processID string) (*Process, error) {
	return h.c.GetProcess(ctx, h.idOrName, processID)
}

// DeleteProcess is Client.DeleteProcess on this sandbox.
func (h *SandboxHandle) DeleteProcess(ctx context.Context, processID string) error {
	return h.c.DeleteProcess(ctx, h.idOrName, processID)
}

// SignalProcess is Client.SignalProcess on this sandbox.
func (h *SandboxHandle) SignalProcess(ctx context.Context, processID, signal string) (*Process, error) {
	return h.c.SignalProcess(ctx, h.idOrName, processID, signal)
}

// WaitProcess is Client.WaitProcess on this sandbox.
func (h *SandboxHandle) WaitProcess(ctx context.Context, processID string, timeout time.Duration) (*Process, error) {
	return h.c.WaitProcess(ctx, h.idOrName, processID, timeout)
}

// WaitForLog is Client.WaitForLog on this sandbox.
func (h *SandboxHandle) WaitForLog(ctx context.Context, processID string, req WaitForLogRequest) (*LogMatch, error) {
	return h.c.WaitForLog(ctx, h.idOrName, processID, req)
}

// WaitForPort is Client.WaitForPort on this sandbox.
func (h *SandboxHandle) WaitForPort(ctx context.Context, processID string, req WaitForPortRequest) (*PortReady, error) {
	return h.c.WaitForPort(ctx, h.idOrName, processID, req)
}

// WriteStdin is Client.WriteStdin on this sandbox.
func (h *SandboxHandle) WriteStdin(ctx context.Context, processID string, data []byte) error {
	return h.c.WriteStdin(ctx, h.idOrName, processID, data)
}

// CloseStdin is Client.CloseStdin on this sandbox.
func (h *SandboxHandle) CloseStdin(ctx context.Context, processID string) error {
	return h.c.CloseStdin(ctx, h.idOrName, processID)
}

// ProcessLogs is Client.ProcessLogs on this sandbox.
func (h *SandboxHandle) ProcessLogs(ctx context.Context, processID string, opts LogsOptions, stdout, stderr io.Writer) (*LogsResult, error) {
	return h.c.ProcessLogs(ctx, h.idOrName, processID, opts, stdout, stderr)
}

// CreateSession is Client.CreateSession on this sandbox.
func (h *SandboxHandle) CreateSession(ctx context.Context, req CreateSessionRequest) (*Session, error) {
	return h.c.CreateSession(ctx, h.idOrName, req)
}

// ListSessions is Client.ListSessions on this sandbox.
func (h *SandboxHandle) ListSessions(ctx context.Context) ([]Session, error) {
	return h.c.ListSessions(ctx, h.idOrName)
}

// DeleteSession is Client.DeleteSession on this sandbox.
func (h *SandboxHandle) DeleteSession(ctx context.Context, sessionID string) error {
	return h.c.DeleteSession(ctx, h.idOrName, sessionID)
}

// SessionExec is Client.SessionExec on this sandbox.
func (h *SandboxHandle) SessionExec(ctx context.Context, sessionID string, req SessionExecRequest) (*SessionExecResult, error) {
	return h.c.SessionExec(ctx, h.idOrName, sessionID, req)
}

// CreatePTY is Client.CreatePTY on this sandbox.
func (h *SandboxHandle) CreatePTY(ctx context.Context, req CreatePTYRequest) (*PTY, error) {
	return h.c.CreatePTY(ctx, h.idOrName, req)
}

// AttachPTY is Client.AttachPTY on this sandbox.
func (h *SandboxHandle) AttachPTY(ctx context.Context, ptyID string) (*PTYConn, error) {
	return h.c.AttachPTY(ctx, h.idOrName, ptyID)
}

// DeletePTY is Client.DeletePTY on this sandbox.
func (h *SandboxHandle) DeletePTY(ctx context.Context, ptyID string) error {
	return h.c.DeletePTY(ctx, h.idOrName, ptyID)
}

// Watch is Client.Watch on this sandbox.
func (h *SandboxHandle) Watch(ctx context.Context, opts WatchOptions) (*Watcher, error) {
	return h.c.Watch(ctx, h.idOrName, opts)
}
