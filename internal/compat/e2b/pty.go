package e2b

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"connectrpc.com/connect"
	"github.com/coder/websocket"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/compat/e2b/envdpb/processpb"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// envd's PTYs (the SDK's sbx.pty) over sbx's terminals (the agent's
// /ptys): Start with a pty is a terminal, its output is relayed from the
// terminal's WebSocket as data.pty events, SendInput's pty bytes are typed
// into it, Update resizes it and a signal ends it. A terminal started
// without a tag gets an id ptyPrefix+…; like processes, terminals are found
// again by pid through the agent's list, so nothing is kept here.

const ptyPrefix = "e2b-pty-"

// ptyReadLimit is the largest frame read from a terminal's WebSocket; the
// agent batches output well below it.
const ptyReadLimit = 1 << 20

// startPTY starts the process of req on a terminal and relays its output.
func (b box) startPTY(ctx context.Context, req *connect.Request[processpb.StartRequest], stream *connect.ServerStream[processpb.StartResponse]) error {
	m, cfg, user := req.Msg, req.Msg.GetProcess(), userOf(req.Header())
	id := m.GetTag()
	if id == "" {
		id = ptyPrefix + randomHex()
	}
	size := m.GetPty().GetSize()
	create := wire.CreatePTYRequest{ID: id, Cmd: append([]string{cfg.GetCmd()}, cfg.GetArgs()...), Env: cfg.GetEnvs(), User: user,
		Cols: int(size.GetCols()), Rows: int(size.GetRows()), Cwd: homeOf(user)}
	if cfg.Cwd != nil {
		create.Cwd = absPath(cfg.GetCwd(), user)
	}
	term, err := callAgent[wire.PTY](ctx, b, agentapi.CreatePTY, agentapi.Params{}, create)
	if errdefs.CodeOf(err) == wire.CodeUnknownUser && !hasUser(req.Header()) {
		// An image without E2B's "user" account: as root, as commands run.
		create.User, create.Cwd = "", ""
		if cfg.Cwd != nil {
			create.Cwd = absPath(cfg.GetCwd(), "root")
		}
		term, err = callAgent[wire.PTY](ctx, b, agentapi.CreatePTY, agentapi.Params{}, create)
	}
	if err != nil {
		return connectError(err)
	}
	if err := stream.Send(&processpb.StartResponse{Event: startEvent(term.Pid)}); err != nil {
		return err
	}
	return b.followPTY(ctx, id, true, func(ev *processpb.ProcessEvent) error {
		return stream.Send(&processpb.StartResponse{Event: ev})
	})
}

// followPTY relays a terminal's output (with replay, what it kept of the
// past first) and then its end.
func (b box) followPTY(ctx context.Context, id string, replay bool, send func(*processpb.ProcessEvent) error) error {
	client, _, err := b.s.sandboxes.Agent(ctx, b.id)
	if err != nil {
		return connectError(err)
	}
	// A WebSocket, which agentapi.Open does not carry; the path is still the route's.
	u := "ws://agent" + agentapi.AttachPTY.Expand(id) + "?" + url.Values{"replay": {fmt.Sprint(replay)}}.Encode()
	conn, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPClient: &http.Client{Transport: client.Transport()}})
	if err != nil {
		return connect.NewError(connect.CodeUnavailable, fmt.Errorf("attach to terminal %s: %v", id, err))
	}
	defer conn.CloseNow()
	conn.SetReadLimit(ptyReadLimit)
	for {
		typ, b, err := conn.Read(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return connect.NewError(connect.CodeUnavailable, fmt.Errorf("the terminal's stream broke: %v", err))
		}
		if typ == websocket.MessageBinary {
			data := &processpb.ProcessEvent_DataEvent{Output: &processpb.ProcessEvent_DataEvent_Pty{Pty: b}}
			if err := send(&processpb.ProcessEvent{Event: &processpb.ProcessEvent_Data{Data: data}}); err != nil {
				return err
			}
			continue
		}
		var ctl wire.PTYControl
		if json.Unmarshal(b, &ctl) != nil {
			continue
		}
		switch ctl.Type {
		case "exit":
			return send(translateExecEvent(wire.ExecEvent{Type: agentapi.EventExit, ExitCode: ctl.ExitCode, Signal: ctl.Signal}))
		case agentapi.EventError:
			msg := "the terminal's stream broke"
			if ctl.Error != nil {
				msg = ctl.Error.Message
			}
			return send(translateExecEvent(wire.ExecEvent{Type: agentapi.EventError, Error: &wire.ErrorBody{Message: msg}}))
		}
	}
}

// findPTY resolves a selector (pid or tag) to a running terminal.
func (b box) findPTY(ctx context.Context, sel *processpb.ProcessSelector) (*wire.PTY, error) {
	if sel == nil || sel.Selector == nil {
		return nil, connect.NewError(connect.CodeInvalidArgument, errors.New("process selector (pid or tag) is required"))
	}
	terms, err := callAgent[[]wire.PTY](ctx, b, agentapi.ListPTYs, agentapi.Params{}, nil)
	if err != nil {
		return nil, connectError(err)
	}
	for i := range terms {
		if t := &terms[i]; t.State == wire.ProcessRunning && selects(sel, t.Pid, t.ID) {
			return t, nil
		}
	}
	return nil, connect.NewError(connect.CodeNotFound, fmt.Errorf("process %s not found", selectorText(sel)))
}

// ptyInput types b into the terminal sel names.
func (b box) ptyInput(ctx context.Context, sel *processpb.ProcessSelector, data []byte) error {
	t, err := b.findPTY(ctx, sel)
	if err != nil {
		return err
	}
	resp, err := b.open(ctx, agentapi.PTYInput, at(t.ID), bytes.NewReader(data), "application/octet-stream")
	if err != nil {
		return connectError(err)
	}
	resp.Body.Close()
	return nil
}

// resizePTY is Update's pty size.
func (b box) resizePTY(ctx context.Context, sel *processpb.ProcessSelector, size *processpb.PTY_Size) error {
	t, err := b.findPTY(ctx, sel)
	if err != nil {
		return err
	}
	if size == nil {
		return connect.NewError(connect.CodeInvalidArgument, errors.New("pty.size is required"))
	}
	_, err = callAgent[wire.PTY](ctx, b, agentapi.ResizePTY, at(t.ID), wire.ResizeRequest{Cols: int(size.GetCols()), Rows: int(size.GetRows())})
	if err != nil {
		return connectError(err)
	}
	return nil
}

// ptyInfos are the running terminals as envd lists processes.
func (b box) ptyInfos(ctx context.Context) ([]*processpb.ProcessInfo, error) {
	terms, err := callAgent[[]wire.PTY](ctx, b, agentapi.ListPTYs, agentapi.Params{}, nil)
	if err != nil {
		return nil, connectError(err)
	}
	var out []*processpb.ProcessInfo
	for _, t := range terms {
		if t.State != wire.ProcessRunning {
			continue
		}
		info := &processpb.ProcessInfo{Pid: uint32(t.Pid), Config: &processpb.ProcessConfig{Cwd: &t.Cwd}}
		if len(t.Cmd) > 0 {
			info.Config.Cmd, info.Config.Args = t.Cmd[0], t.Cmd[1:]
		}
		if id := t.ID; !strings.HasPrefix(id, ptyPrefix) {
			info.Tag = &id
		}
		out = append(out, info)
	}
	return out, nil
}
