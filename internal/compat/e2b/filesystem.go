package e2b

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/compat/e2b/envdpb/filesystempb"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// filesystemService is envd's filesystem.Filesystem over the agent's file
// and watch routes. Relative paths start at the user's home.
type filesystemService struct{ s *Server }

func (b box) stat(ctx context.Context, p string) (*filesystempb.EntryInfo, error) {
	fi, err := callAgent[wire.FileInfo](ctx, b, agentapi.StatFile, query("path", p), nil)
	if err != nil {
		return nil, connectError(err)
	}
	return entryInfo(fi), nil
}

func (f *filesystemService) Stat(ctx context.Context, req *connect.Request[filesystempb.StatRequest]) (*connect.Response[filesystempb.StatResponse], error) {
	b := f.s.box(req.Header())
	e, err := b.stat(ctx, absPath(req.Msg.GetPath(), userOf(req.Header())))
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&filesystempb.StatResponse{Entry: e}), nil
}

// MakeDir answers AlreadyExists for an existing directory (the SDK's false).
func (f *filesystemService) MakeDir(ctx context.Context, req *connect.Request[filesystempb.MakeDirRequest]) (*connect.Response[filesystempb.MakeDirResponse], error) {
	b := f.s.box(req.Header())
	p := absPath(req.Msg.GetPath(), userOf(req.Header()))
	if e, err := b.stat(ctx, p); err == nil {
		if e.Type == filesystempb.FileType_FILE_TYPE_DIRECTORY {
			return nil, connect.NewError(connect.CodeAlreadyExists, fmt.Errorf("directory %s already exists", p))
		}
		return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("%s exists and is not a directory", p))
	}
	// The directories made are the user's, as envd makes them.
	fi, err := callAgent[wire.FileInfo](ctx, b, agentapi.MkdirOwned, query("path", p, "owner", userOf(req.Header())), nil)
	if errdefs.CodeOf(err) == wire.CodeUnknownUser && !hasUser(req.Header()) {
		// An image without DefaultUser: as root, as its commands run (process.go).
		fi, err = callAgent[wire.FileInfo](ctx, b, agentapi.MkdirOwned, query("path", p, "owner", "root"), nil)
	}
	if err != nil {
		return nil, connectError(err)
	}
	return connect.NewResponse(&filesystempb.MakeDirResponse{Entry: entryInfo(fi)}), nil
}

func (f *filesystemService) Move(ctx context.Context, req *connect.Request[filesystempb.MoveRequest]) (*connect.Response[filesystempb.MoveResponse], error) {
	b := f.s.box(req.Header())
	user := userOf(req.Header())
	mv := wire.MoveRequest{From: absPath(req.Msg.GetSource(), user), To: absPath(req.Msg.GetDestination(), user), Overwrite: true}
	fi, err := callAgent[wire.FileInfo](ctx, b, agentapi.Move, agentapi.Params{}, mv)
	if err != nil {
		return nil, connectError(err)
	}
	return connect.NewResponse(&filesystempb.MoveResponse{Entry: entryInfo(fi)}), nil
}

func (f *filesystemService) ListDir(ctx context.Context, req *connect.Request[filesystempb.ListDirRequest]) (*connect.Response[filesystempb.ListDirResponse], error) {
	b := f.s.box(req.Header())
	depth := max(1, req.Msg.GetDepth())
	q := query("path", absPath(req.Msg.GetPath(), userOf(req.Header())), "depth", strconv.Itoa(int(depth)))
	list, err := callAgent[[]wire.FileInfo](ctx, b, agentapi.ListFiles, q, nil)
	if err != nil {
		return nil, connectError(err)
	}
	out := &filesystempb.ListDirResponse{}
	for _, fi := range list {
		out.Entries = append(out.Entries, entryInfo(fi))
	}
	return connect.NewResponse(out), nil
}

func (f *filesystemService) Remove(ctx context.Context, req *connect.Request[filesystempb.RemoveRequest]) (*connect.Response[filesystempb.RemoveResponse], error) {
	b := f.s.box(req.Header())
	q := query("path", absPath(req.Msg.GetPath(), userOf(req.Header())), "recursive", "true")
	if _, err := callAgent[agentapi.None](ctx, b, agentapi.DeleteFile, q, nil); err != nil {
		return nil, connectError(err)
	}
	return connect.NewResponse(&filesystempb.RemoveResponse{}), nil
}

// WatchDir relays the agent's watch: a start event once it is ready, then
// create, write, remove and rename events named relative to the directory.
func (f *filesystemService) WatchDir(ctx context.Context, req *connect.Request[filesystempb.WatchDirRequest], stream *connect.ServerStream[filesystempb.WatchDirResponse]) error {
	b := f.s.box(req.Header())
	switch {
	case req.Msg.GetIncludeEntry():
		return connect.NewError(connect.CodeInvalidArgument, errors.New("watchDir's includeEntry is not supported by sbx's E2B layer: events name the path; stat it with files.getInfo"))
	case req.Msg.GetAllowNetworkMounts():
		return connect.NewError(connect.CodeInvalidArgument, errors.New("watchDir's allowNetworkMounts is not supported by sbx's E2B layer"))
	}
	dir := absPath(req.Msg.GetPath(), userOf(req.Header()))
	q := query("path", dir)
	if req.Msg.GetRecursive() {
		q.Query.Set("recursive", "true")
	}
	resp, err := b.open(ctx, agentapi.Watch, q, nil, "")
	if err != nil {
		return connectError(err)
	}
	defer resp.Body.Close()
	rd := agentapi.NewReader(resp.Body, agentapi.MaxLine)
	for {
		line, err := rd.Next()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return connect.NewError(connect.CodeUnavailable, fmt.Errorf("the watch stream broke: %v", err))
		}
		var ev wire.WatchEvent
		if json.Unmarshal(line, &ev) != nil {
			continue
		}
		var out *filesystempb.WatchDirResponse
		switch ev.Type {
		case "ready":
			out = &filesystempb.WatchDirResponse{Event: &filesystempb.WatchDirResponse_Start{Start: &filesystempb.WatchDirResponse_StartEvent{}}}
		case agentapi.EventHeartbeat:
			out = &filesystempb.WatchDirResponse{Event: &filesystempb.WatchDirResponse_Keepalive{Keepalive: &filesystempb.WatchDirResponse_KeepAlive{}}}
		case agentapi.EventError:
			msg := "the watch failed"
			if ev.Error != nil {
				msg = ev.Error.Message
			}
			return connect.NewError(connect.CodeUnavailable, errors.New(msg))
		default:
			t, ok := eventTypes[ev.Type]
			if !ok {
				continue
			}
			fe := &filesystempb.FilesystemEvent{Name: relativeTo(dir, ev.Path), Type: t}
			out = &filesystempb.WatchDirResponse{Event: &filesystempb.WatchDirResponse_Filesystem{Filesystem: fe}}
		}
		if err := stream.Send(out); err != nil {
			return err
		}
	}
}

var eventTypes = map[string]filesystempb.EventType{
	"create": filesystempb.EventType_EVENT_TYPE_CREATE,
	"write":  filesystempb.EventType_EVENT_TYPE_WRITE,
	"remove": filesystempb.EventType_EVENT_TYPE_REMOVE,
	"rename": filesystempb.EventType_EVENT_TYPE_RENAME,
	"chmod":  filesystempb.EventType_EVENT_TYPE_CHMOD,
}

// relativeTo names p relative to dir, as envd does.
func relativeTo(dir, p string) string {
	if !strings.HasPrefix(p, "/") {
		return p
	}
	if rel, ok := strings.CutPrefix(p, strings.TrimSuffix(dir, "/")+"/"); ok {
		return rel
	}
	return p
}

var errNoPolling = connect.NewError(connect.CodeUnimplemented, errors.New("sbx's E2B layer serves WatchDir (a stream), not polled watchers"))

func (f *filesystemService) CreateWatcher(context.Context, *connect.Request[filesystempb.CreateWatcherRequest]) (*connect.Response[filesystempb.CreateWatcherResponse], error) {
	return nil, errNoPolling
}

func (f *filesystemService) GetWatcherEvents(context.Context, *connect.Request[filesystempb.GetWatcherEventsRequest]) (*connect.Response[filesystempb.GetWatcherEventsResponse], error) {
	return nil, errNoPolling
}

func (f *filesystemService) RemoveWatcher(context.Context, *connect.Request[filesystempb.RemoveWatcherRequest]) (*connect.Response[filesystempb.RemoveWatcherResponse], error) {
	return nil, errNoPolling
}

// entryInfo describes an sbx FileInfo as envd's EntryInfo.
func entryInfo(fi wire.FileInfo) *filesystempb.EntryInfo {
	mode, _ := strconv.ParseUint(fi.Mode, 8, 32)
	e := &filesystempb.EntryInfo{Name: fi.Name, Path: fi.Path, Size: fi.Size, Mode: uint32(mode),
		ModifiedTime: timestamppb.New(fi.ModTime)}
	fm := os.FileMode(mode)
	switch fi.Type {
	case "file":
		e.Type = filesystempb.FileType_FILE_TYPE_FILE
	case "dir":
		e.Type, fm = filesystempb.FileType_FILE_TYPE_DIRECTORY, fm|os.ModeDir
	case "symlink":
		e.Type, fm = filesystempb.FileType_FILE_TYPE_SYMLINK, fm|os.ModeSymlink
		e.SymlinkTarget = &fi.Target
	}
	e.Permissions = fm.String()
	if e.Name == "" {
		e.Name = path.Base(fi.Path)
	}
	return e
}
