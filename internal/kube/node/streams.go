package node

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	dto "github.com/prometheus/client_model/go"
	vkerrdefs "github.com/virtual-kubelet/virtual-kubelet/errdefs"
	"github.com/virtual-kubelet/virtual-kubelet/node/api"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	utilexec "k8s.io/utils/exec"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/kube/podspec"
	"github.com/sbxhq/sbx/internal/sandbox"
	"github.com/sbxhq/sbx/wire"
)

// maxLogRead bounds what kubectl logs reads of a main process's log.
const maxLogRead = 16 << 20

// GetContainerLogs is kubectl logs: the sandbox's main-process log (the
// rotated file, then the current one), cut to opts' tail and byte limit.
// Follow is not supported (a shortcut): the logs so far are returned.
func (p *Provider) GetContainerLogs(ctx context.Context, namespace, podName, _ string, opts api.ContainerLogOpts) (io.ReadCloser, error) {
	ctx = nodeScope(ctx) // kube-apiserver asks (pinned in tlsConfig), for any team's pod
	sb, err := p.m.Get(ctx, podspec.IDForPod(namespace, podName))
	if err != nil {
		return nil, vkerrdefs.NotFound(err.Error())
	}
	path, err := p.m.MainLogPath(sb)
	if err != nil {
		return io.NopCloser(bytes.NewReader(nil)), nil // no main process: no logs
	}
	var buf bytes.Buffer
	for _, f := range []string{path + ".1", path} {
		fh, err := sandbox.OpenLogFile(f)
		if err != nil {
			continue
		}
		io.Copy(&buf, io.LimitReader(fh, maxLogRead))
		fh.Close()
	}
	b := buf.Bytes()
	if len(b) > maxLogRead {
		b = b[len(b)-maxLogRead:]
	}
	if opts.Tail > 0 {
		b = tailLines(b, opts.Tail)
	}
	if opts.LimitBytes > 0 && len(b) > opts.LimitBytes {
		b = b[:opts.LimitBytes]
	}
	return io.NopCloser(bytes.NewReader(b)), nil
}

// tailLines keeps the last n lines of b.
func tailLines(b []byte, n int) []byte {
	end := len(b)
	if end > 0 && b[end-1] == '\n' {
		end--
	}
	for i := end - 1; i >= 0; i-- {
		if b[i] == '\n' {
			n--
			if n == 0 {
				return b[i+1:]
			}
		}
	}
	return b
}

// RunInContainer is kubectl exec: the command runs on the agent's
// exec/attach (stdin streams in, stdout and stderr stream out, its exit
// code becomes kubectl's). A stopped sandbox is started first, as any
// toolbox call does. With -t the command still runs without a terminal
// (a shortcut: sbx's terminals are its own PTY API).
func (p *Provider) RunInContainer(ctx context.Context, namespace, podName, _ string, cmd []string, attach api.AttachIO) error {
	ctx = nodeScope(ctx) // kube-apiserver asks (pinned in tlsConfig), for any team's pod
	a, _, err := p.m.Agent(ctx, podspec.IDForPod(namespace, podName))
	if err != nil {
		return err
	}
	line, err := json.Marshal(wire.ExecRequest{Cmd: cmd})
	if err != nil {
		return err
	}
	var body io.Reader = bytes.NewReader(append(line, '\n'))
	if in := attach.Stdin(); in != nil {
		body = io.MultiReader(body, in)
	}
	resp, err := agentapi.Open(ctx, a, agentapi.ExecAttach, agentapi.Params{}, body, agentapi.ContentTypeNDJSON)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	stdout, stderr := attach.Stdout(), attach.Stderr()
	rd := agentapi.NewReader(resp.Body, agentapi.MaxLine)
	for {
		line, err := rd.Next()
		if err != nil {
			return fmt.Errorf("the sandbox went away mid-command: %w", err)
		}
		var ev wire.ExecEvent
		if json.Unmarshal(line, &ev) != nil {
			continue
		}
		switch ev.Type {
		case "stdout":
			if stdout != nil {
				stdout.Write(ev.Data)
			}
		case "stderr":
			if stderr != nil {
				stderr.Write(ev.Data)
			} else if stdout != nil {
				stdout.Write(ev.Data) // a terminal merges them
			}
		case "exit":
			if ev.ExitCode != 0 || ev.Signal != "" {
				code := ev.ExitCode
				if code == 0 {
					code = 128 + 9 // killed by a signal
				}
				return utilexec.CodeExitError{Err: fmt.Errorf("command terminated with exit code %d", code), Code: code}
			}
			return nil
		case "error":
			if ev.Error != nil {
				return &errdefs.Error{Kind: errdefs.KindInternal, Code: ev.Error.Code, Message: ev.Error.Message}
			}
			return fmt.Errorf("exec failed")
		}
	}
}

// AttachToContainer is not supported: a sandbox's main process has no
// terminal to attach to (kubectl logs shows its output).
func (p *Provider) AttachToContainer(context.Context, string, string, string, api.AttachIO) error {
	return vkerrdefs.InvalidInput("attach is not supported by sbx hosts; use kubectl exec or kubectl logs")
}

// GetStatsSummary is not served (sbx has its own stats API).
func (p *Provider) GetStatsSummary(context.Context) (*statsv1alpha1.Summary, error) {
	return nil, vkerrdefs.InvalidInput("stats summary is not served by sbx hosts; use sbx's stats API")
}

// GetMetricsResource is not served (sbx exports Prometheus metrics itself).
func (p *Provider) GetMetricsResource(context.Context) ([]*dto.MetricFamily, error) {
	return nil, vkerrdefs.InvalidInput("resource metrics are not served by sbx hosts; use sbx's /metrics")
}

// PortForward is not supported: sbx has previews and ports for that.
func (p *Provider) PortForward(context.Context, string, string, int32, io.ReadWriteCloser) error {
	return vkerrdefs.InvalidInput("port-forward is not supported by sbx hosts; use sbx previews")
}
