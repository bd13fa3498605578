package e2b

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"connectrpc.com/connect"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/compat/e2b/envdpb/processpb"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// processService is envd's process.Process over sbx's background processes
// (the agent's /processes). An E2B process is addressed by pid or tag: the
// tag is the sbx process id; a process started without a tag gets an id
// "e2b-…", which List does not report as a tag. The pid is the process's
// pid in the sandbox, found again through the agent's process list, so the
// mapping needs no state here and survives a daemon restart.
type processService struct{ s *Server }

const untaggedPrefix = "e2b-"

func (p *processService) Start(ctx context.Context, req *connect.Request[processpb.StartRequest], stream *connect.ServerStream[processpb.StartResponse]) error {
	b := p.s.box(req.Header())
	m := req.Msg
	if m.GetProcess() == nil || m.GetProcess().GetCmd() == "" {
		return connect.NewError(connect.CodeInvalidArgument, errors.New("process.cmd is required"))
	}
	if m.Pty != nil {
		return b.startPTY(ctx, req, stream) // pty.go
	}
	user := userOf(req.Header())
	id := m.GetTag()
	if id == "" {
		id = untaggedPrefix + randomHex()
	}
	cfg := m.GetProcess()
	start := wire.StartProcessRequest{ID: id, Cmd: append([]string{cfg.GetCmd()}, cfg.GetArgs()...), Env: cfg.GetEnvs(), User: user}
	if cfg.Cwd != nil {
		start.Cwd = absPath(cfg.GetCwd(), user)
	} else {
		start.Cwd = homeOf(user)
	}
	proc, err := callAgent[wire.Process](ctx, b, agentapi.StartProcess, agentapi.Params{}, start)
	if errdefs.CodeOf(err) == wire.CodeUnknownUser && !hasUser(req.Header()) {
		// An image without E2B's "user" account: run as root, in /root or the workdir.
		start.User, start.Cwd = "", ""
		if cfg.Cwd != nil {
			start.Cwd = absPath(cfg.GetCwd(), "root")
		}
		proc, err = callAgent[wire.Process](ctx, b, agentapi.StartProcess, agentapi.Params{}, start)
	}
	if err != nil {
		return connectError(err)
	}
	if !m.GetStdin() {
		// E2B's default: no stdin, so a command that reads it gets end-of-file.
		if _, err := callAgent[agentapi.None](ctx, b, agentapi.CloseStdin, at(id), nil); err != nil {
			return connectError(err)
		}
	}
	if err := stream.Send(&processpb.StartResponse{Event: startEvent(proc.Pid)}); err != nil {
		return err
	}
	return b.follow(ctx, id, 0, func(ev *processpb.ProcessEvent) error {
		return stream.Send(&processpb.StartResponse{Event: ev})
	})
}

func (p *processService) Connect(ctx context.Context, req *connect.Request[processpb.ConnectRequest], stream *connect.ServerStream[processpb.ConnectResponse]) error {
	b := p.s.box(req.Header())
	proc, err := b.find(ctx, req.Msg.GetProcess())
	if connect.CodeOf(err) == connect.CodeNotFound {
		t, terr := b.findPTY(ctx, req.Msg.GetProcess())
		if terr != nil {
			return terr
		}
		if err := stream.Send(&processpb.ConnectResponse{Event: startEvent(t.Pid)}); err != nil {
			return err
		}
		return b.followPTY(ctx, t.ID, false, func(ev *processpb.ProcessEvent) error {
			return stream.Send(&processpb.ConnectResponse{Event: ev})
		})
	}
	if err != nil {
		return err
	}
	if err := stream.Send(&processpb.ConnectResponse{Event: startEvent(proc.Pid)}); err != nil {
		return err
	}
	return b.follow(ctx, proc.ID, proc.LastSeq, func(ev *processpb.ProcessEvent) error {
		return stream.Send(&processpb.ConnectResponse{Event: ev})
	})
}

// follow relays a process's output after seq offset, then its end.
func (b box) follow(ctx context.Context, id string, offset int64, send func(*processpb.ProcessEvent) error) error {
	q := agentapi.Params{Path: []string{id}, Query: url.Values{"follow": {"true"}}}
	if offset > 0 {
		q.Query.Set("offset", strconv.FormatInt(offset, 10))
	}
	resp, err := b.open(ctx, agentapi.ProcessLogs, q, nil, "")
	if err != nil {
		return connectError(err)
	}
	defer resp.Body.Close()
	rd := agentapi.NewReader(resp.Body, agentapi.MaxLine)
	for {
		line, err := rd.Next()
		if err != nil {
			return connect.NewError(connect.CodeUnavailable, fmt.Errorf("the process's output stream broke: %v", err))
		}
		var ev wire.ExecEvent
		if json.Unmarshal(line, &ev) != nil {
			continue
		}
		out := translateExecEvent(ev)
		if out == nil {
			continue
		}
		if err := send(out); err != nil {
			return err
		}
		if ev.Type == agentapi.EventExit {
			// The process stays in the agent's table (which drops the
			// oldest exited ones): deleting it would kill its process
			// group, and what it left running (nohup … &) lives on, as on E2B.
			return nil
		}
		if ev.Type == agentapi.EventError || ev.Type == agentapi.EventEnd {
			return nil
		}
	}
}

// translateExecEvent maps one of sbx's process log events onto envd's
// ProcessEvent; nil for events envd has no counterpart of.
func translateExecEvent(ev wire.ExecEvent) *processpb.ProcessEvent {
	switch ev.Type {
	case "stdout":
		return &processpb.ProcessEvent{Event: &processpb.ProcessEvent_Data{Data: &processpb.ProcessEvent_DataEvent{Output: &processpb.ProcessEvent_DataEvent_Stdout{Stdout: ev.Data}}}}
	case "stderr":
		return &processpb.ProcessEvent{Event: &processpb.ProcessEvent_Data{Data: &processpb.ProcessEvent_DataEvent{Output: &processpb.ProcessEvent_DataEvent_Stderr{Stderr: ev.Data}}}}
	case agentapi.EventHeartbeat:
		return &processpb.ProcessEvent{Event: &processpb.ProcessEvent_Keepalive{Keepalive: &processpb.ProcessEvent_KeepAlive{}}}
	case agentapi.EventExit:
		end := &processpb.ProcessEvent_EndEvent{ExitCode: int32(ev.ExitCode), Exited: ev.Signal == "", Status: fmt.Sprintf("exit status %d", ev.ExitCode)}
		if ev.Signal != "" {
			// Go's os.ProcessState wording, as envd reports it.
			end.ExitCode, end.Status = -1, "signal: "+strings.ToLower(strings.TrimPrefix(ev.Signal, "SIG"))
			if ev.Signal == "SIGKILL" {
				end.Status = "signal: killed"
			}
		}
		return &processpb.ProcessEvent{Event: &processpb.ProcessEvent_End{End: end}}
	case agentapi.EventError:
		msg := "the process's output stream broke"
		if ev.Error != nil {
			msg = ev.Error.Message
		}
		return &processpb.ProcessEvent{Event: &processpb.ProcessEvent_End{End: &processpb.ProcessEvent_EndEvent{ExitCode: -1, Status: "error", Error: &msg}}}
	}
	return nil
}

func startEvent(pid int) *processpb.ProcessEvent {
	return &processpb.ProcessEvent{Event: &processpb.ProcessEvent_Start{Start: &processpb.ProcessEvent_StartEvent{Pid: uint32(pid)}}}
}

func (p *processService) List(ctx context.Context, req *connect.Request[processpb.ListRequest]) (*connect.Response[processpb.ListResponse], error) {
	b := p.s.box(req.Header())
	procs, err := b.list(ctx)
	if err != nil {
		return nil, err
	}
	terms, err := b.ptyInfos(ctx)
	if err != nil {
		return nil, err
	}
	out := &processpb.ListResponse{Processes: terms}
	for _, proc := range procs {
		if proc.State != wire.ProcessRunning {
			continue
		}
		info := &processpb.ProcessInfo{Pid: uint32(proc.Pid), Config: &processpb.ProcessConfig{}}
		if len(proc.Cmd) > 0 {
			info.Config.Cmd, info.Config.Args = proc.Cmd[0], proc.Cmd[1:]
		}
		if proc.Cwd != "" {
			info.Config.Cwd = &proc.Cwd
		}
		if !strings.HasPrefix(proc.ID, untaggedPrefix) {
			info.Tag = &proc.ID
		}
		out.Processes = append(out.Processes, info)
	}
	return connect.NewResponse(out), nil
}

func (b box) list(ctx context.Context) ([]wire.Process, error) {
	procs, err := callAgent[[]wire.Process](ctx, b, agentapi.ListProcesses, agentapi.Params{}, nil)
	if err != nil {
		return nil, connectError(err)
	}
	return procs, nil
}

// find resolves a selector (pid or tag) to a running process.
func (b box) find(ctx context.Context, sel *processpb.ProcessSelector) (*wire.Process, error) {
	if sel == nil || sel.Selector == nil {
		return nil, connect.NewError(connect.CodeInvalidArgument, errors.New("process selector (pid or tag) is required"))
	}
	procs, err := b.list(ctx)
	if err != nil {
		return nil, err
	}
	for i := range procs {
		if proc := &procs[i]; proc.State == wire.ProcessRunning && selects(sel, proc.Pid, proc.ID) {
			return proc, nil
		}
	}
	return nil, connect.NewError(connect.CodeNotFound, fmt.Errorf("process %s not found", selectorText(sel)))
}

// selects reports whether sel names the process or terminal of pid and id
// (its tag).
func selects(sel *processpb.ProcessSelector, pid int, id string) bool {
	switch s := sel.Selector.(type) {
	case *processpb.ProcessSelector_Pid:
		return uint32(pid) == s.Pid
	case *processpb.ProcessSelector_Tag:
		return id == s.Tag
	}
	return false
}

func selectorText(sel *processpb.ProcessSelector) string {
	if t, ok := sel.Selector.(*processpb.ProcessSelector_Tag); ok {
		return "with tag " + t.Tag
	}
	return "with pid " + strconv.Itoa(int(sel.GetPid()))
}

func (p *processService) SendSignal(ctx context.Context, req *connect.Request[processpb.SendSignalRequest]) (*connect.Response[processpb.SendSignalResponse], error) {
	b := p.s.box(req.Header())
	sig := "SIGTERM"
	switch req.Msg.GetSignal() {
	case processpb.Signal_SIGNAL_SIGKILL:
		sig = "SIGKILL"
	case processpb.Signal_SIGNAL_SIGTERM:
	default:
		return nil, connect.NewError(connect.CodeInvalidArgument, errors.New("signal must be SIGTERM or SIGKILL"))
	}
	proc, err := b.find(ctx, req.Msg.GetProcess())
	if connect.CodeOf(err) == connect.CodeNotFound {
		// A terminal (pty.kill): ending it kills every process of its session.
		t, terr := b.findPTY(ctx, req.Msg.GetProcess())
		if terr != nil {
			return nil, terr
		}
		if _, err := callAgent[agentapi.None](ctx, b, agentapi.DeletePTY, at(t.ID), nil); err != nil {
			return nil, connectError(err)
		}
		return connect.NewResponse(&processpb.SendSignalResponse{}), nil
	}
	if err != nil {
		return nil, err
	}
	if _, err := callAgent[agentapi.None](ctx, b, agentapi.SignalProcess, at(proc.ID), wire.SignalRequest{Signal: sig}); err != nil {
		return nil, connectError(err)
	}
	return connect.NewResponse(&processpb.SendSignalResponse{}), nil
}

func (p *processService) SendInput(ctx context.Context, req *connect.Request[processpb.SendInputRequest]) (*connect.Response[processpb.SendInputResponse], error) {
	b := p.s.box(req.Header())
	if err := b.sendInput(ctx, req.Msg.GetProcess(), req.Msg.GetInput()); err != nil {
		return nil, err
	}
	return connect.NewResponse(&processpb.SendInputResponse{}), nil
}

func (b box) sendInput(ctx context.Context, sel *processpb.ProcessSelector, in *processpb.ProcessInput) error {
	if in.GetPty() != nil {
		return b.ptyInput(ctx, sel, in.GetPty()) // pty.go
	}
	proc, err := b.find(ctx, sel)
	if err != nil {
		return err
	}
	resp, err := b.open(ctx, agentapi.WriteStdin, at(proc.ID), bytes.NewReader(in.GetStdin()), "application/octet-stream")
	if err != nil {
		return connectError(err)
	}
	resp.Body.Close()
	return nil
}

func (p *processService) StreamInput(ctx context.Context, stream *connect.ClientStream[processpb.StreamInputRequest]) (*connect.Response[processpb.StreamInputResponse], error) {
	b := p.s.box(stream.RequestHeader())
	var sel *processpb.ProcessSelector
	for stream.Receive() {
		switch ev := stream.Msg().Event.(type) {
		case *processpb.StreamInputRequest_Start:
			sel = ev.Start.GetProcess()
		case *processpb.StreamInputRequest_Data:
			if sel == nil {
				return nil, connect.NewError(connect.CodeInvalidArgument, errors.New("the first message must be start"))
			}
			if err := b.sendInput(ctx, sel, ev.Data.GetInput()); err != nil {
				return nil, err
			}
		}
	}
	if err := stream.Err(); err != nil {
		return nil, err
	}
	return connect.NewResponse(&processpb.StreamInputResponse{}), nil
}

func (p *processService) CloseStdin(ctx context.Context, req *connect.Request[processpb.CloseStdinRequest]) (*connect.Response[processpb.CloseStdinResponse], error) {
	b := p.s.box(req.Header())
	proc, err := b.find(ctx, req.Msg.GetProcess())
	if err != nil {
		return nil, err
	}
	if _, err := callAgent[agentapi.None](ctx, b, agentapi.CloseStdin, at(proc.ID), nil); err != nil {
		return nil, connectError(err)
	}
	return connect.NewResponse(&processpb.CloseStdinResponse{}), nil
}

// Update resizes a terminal (pty.resize); a process without one has
// nothing to update.
func (p *processService) Update(ctx context.Context, req *connect.Request[processpb.UpdateRequest]) (*connect.Response[processpb.UpdateResponse], error) {
	b := p.s.box(req.Header())
	if req.Msg.GetPty() == nil {
		return nil, connect.NewError(connect.CodeInvalidArgument, errors.New("update takes a pty size, and nothing else"))
	}
	if err := b.resizePTY(ctx, req.Msg.GetProcess(), req.Msg.GetPty().GetSize()); err != nil {
		return nil, err
	}
	return connect.NewResponse(&processpb.UpdateResponse{}), nil
}

func randomHex() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
