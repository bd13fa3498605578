package gateway

import (
	"context"
	"errors"
	"fmt"
	"github.com/sbxhq/sbx/internal/auth"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	asv1 "sigs.k8s.io/agent-sandbox/api/v1beta1"

	"github.com/sbxhq/sbx/internal/api"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/httpjson"
	"github.com/sbxhq/sbx/sdk"
)

// proxyRoute serves a sandbox-scoped route by forwarding it to the host
// that runs the sandbox, first applying the route's rule for a sandbox
// without a running instance (see internal/api/lookup.go).
func (s *Server) proxyRoute(rt api.RouteInfo) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		ctx := r.Context()
		fctx := ctx
		if _, ok := auth.FromContext(ctx); !ok && rt.Public {
			// A public route (a preview) has no principal: its sandbox is
			// found in every team, and its own token is checked on the host.
			fctx = auth.System(ctx, "public preview lookup")
		}
		e, err := s.cluster.find(fctx, r.PathValue("id"))
		if err != nil {
			return err
		}
		p := s.cluster.placementOf(e)
		if !p.ready {
			switch {
			case rt.StartsInstance:
				if p, err = s.run(ctx, e); err != nil {
					return err
				}
			case rt.Lookup && rt.List:
				httpjson.Write(w, http.StatusOK, []struct{}{})
				return nil
			case rt.Lookup:
				return errdefs.NotFound(sdk.CodeNotInCurrentInstance, "sandbox %s has no running instance: processes, sessions, terminals and contexts live only as long as the instance that made them", e.ref())
			default:
				state := stateOf(e, p)
				return errdefs.Conflict(sdk.CodeSandboxNotRunning, "sandbox %s is %s: this call needs a running instance and does not start one; start it with \"sbx start %s\"", e.ref(), state, e.ref())
			}
		}
		s.forward(w, r, p.api, hostPath(r, e.id), rt.Public)
		return nil
	}
}

// hostPath is r's path with the sandbox addressed by id, as its host knows
// it (the caller may have used the name).
func hostPath(r *http.Request, id string) string {
	rest := strings.TrimPrefix(r.URL.EscapedPath(), "/v1/sandboxes/")
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		rest = rest[i:]
	} else {
		rest = ""
	}
	return "/v1/sandboxes/" + url.PathEscape(id) + rest
}

// forward reverse-proxies r to the host at base with path rawPath (escaped):
// bodies and answers stream both ways unbuffered (NDJSON, file transfers)
// and an upgrade to a WebSocket is relayed (terminals, previews). The
// caller's key, checked by the gateway, is replaced by the hosts' key; a
// public route keeps whatever credentials it came with (a preview token),
// unless they are the gateway's own key.
func (s *Server) forward(w http.ResponseWriter, r *http.Request, base, rawPath string, public bool) {
	target, err := url.Parse(base)
	if err != nil || target.Host == "" {
		httpjson.WriteError(w, errdefs.Unavailable(sdk.CodeSandboxUnavailable, "the sbx host's address %q (node annotation sbx.dev/api) is not a URL", base))
		return
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			joined := strings.TrimSuffix(target.EscapedPath(), "/") + rawPath
			pr.Out.URL.Scheme, pr.Out.URL.Host = target.Scheme, target.Host
			pr.Out.URL.Path, _ = url.PathUnescape(joined)
			pr.Out.URL.RawPath = joined
			pr.Out.Host = target.Host
			pr.SetXForwarded()
			if !public || s.callerHoldsGatewayKey(pr.In) {
				pr.Out.Header.Set("Authorization", "Bearer "+s.cfg.HostToken)
			}
		},
		Transport:     s.cfg.Transport,
		FlushInterval: -1, // NDJSON lines reach the caller as the host writes them
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if r.Context().Err() != nil {
				return // the caller left
			}
			httpjson.WriteError(w, errdefs.Unavailable(sdk.CodeSandboxUnavailable, "the sbx host at %s did not answer: %v", target.Host, err))
		},
	}
	rp.ServeHTTP(w, r)
}

func (s *Server) callerHoldsGatewayKey(r *http.Request) bool {
	_, err := s.principal(r)
	return err == nil
}

// run is the lazy start: a call that needs a running sandbox sets a
// suspended one Running and waits until its pod runs and answers.
func (s *Server) run(ctx context.Context, e entry) (placement, error) {
	if e.obj.Spec.OperatingMode == asv1.SandboxOperatingModeSuspended {
		var err error
		if e, err = s.setMode(ctx, e, asv1.SandboxOperatingModeRunning); err != nil {
			return placement{}, err
		}
	}
	return s.waitReady(ctx, e, true)
}

// setMode patches the object's operatingMode and returns it as written.
func (s *Server) setMode(ctx context.Context, e entry, mode asv1.SandboxOperatingMode) (entry, error) {
	patch := fmt.Appendf(nil, `{"spec":{"operatingMode":%q}}`, mode)
	o, err := s.cluster.Agents.AgentsV1beta1().Sandboxes(e.obj.Namespace).Patch(ctx, e.obj.Name, types.MergePatchType, patch, metav1PatchOptions)
	if err != nil {
		return e, kubeError(err, e)
	}
	return entryOf(o), nil
}

// waitReady waits until e's pod runs and its host answers for it. seen
// says the cache already held the object (else a fresh create may not
// have reached it yet).
func (s *Server) waitReady(ctx context.Context, e entry, seen bool) (placement, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.ReadyTimeout)
	defer cancel()
	var p placement
	why := "waiting for kube-scheduler to place its pod"
	err := s.cluster.waitFor(ctx, func() (bool, error) {
		cur, gone, err := s.cluster.refresh(e)
		switch {
		case err != nil:
			return false, err
		case gone && seen:
			return false, errdefs.NotFound(sdk.CodeSandboxNotFound, "sandbox %s was deleted before it started", e.ref())
		case gone:
			return false, nil
		}
		seen, e = true, cur
		p = s.cluster.placementOf(e)
		if p.pod != nil {
			why = podProgress(p)
			if p.pod.Status.Phase == corev1.PodFailed {
				return false, errdefs.Unavailable(sdk.CodeSandboxUnavailable, "sandbox %s failed to start on host %s: %s", e.ref(), p.node, why)
			}
		}
		return p.ready, nil
	})
	var apiErr *errdefs.Error
	if err != nil && !errors.As(err, &apiErr) {
		if errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
			return p, errdefs.Unavailable(sdk.CodeSandboxUnavailable, "sandbox %s did not become ready within %s (%s); it stays asked to run", e.ref(), s.cfg.ReadyTimeout, why)
		}
		return p, errdefs.Unavailable(sdk.CodeCancelled, "gave up waiting for sandbox %s to start: %v", e.ref(), err)
	}
	return p, err
}

// podProgress says where a pod is on its way to ready, for messages.
func podProgress(p placement) string {
	switch {
	case p.node == "":
		return "its pod is not placed on a host yet"
	case p.api == "":
		return fmt.Sprintf("host %s has no sbx.dev/api annotation", p.node)
	case p.pod.Status.Message != "":
		return fmt.Sprintf("pod on host %s is %s: %s", p.node, p.pod.Status.Phase, p.pod.Status.Message)
	}
	return fmt.Sprintf("pod on host %s is %s", p.node, p.pod.Status.Phase)
}
