package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	asv1 "sigs.k8s.io/agent-sandbox/api/v1beta1"

	"github.com/sbxhq/sbx/internal/api"
	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/httpjson"
	"github.com/sbxhq/sbx/internal/network"
	"github.com/sbxhq/sbx/wire"
)

// proxyRoute serves a sandbox-scoped route by forwarding it to the host
// that runs the sandbox, first applying the route's rule for a sandbox
// without a running instance (see internal/api/lookup.go).
func (s *Server) proxyRoute(rt api.RouteInfo) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		ctx := r.Context()
		e, err := s.findFor(rt, r)
		if err != nil {
			return s.publicRefusal(rt, r, err)
		}
		p := s.cluster.placementOf(e)
		if !p.onHost { // a sandbox on its host, even stopped there, is the host's to answer for
			switch {
			case rt.StartsInstance && rt.Public && !s.mayWake(r):
				// The preview's token and the port's publicity live on the
				// host, which cannot check them for a sandbox that does not
				// run: without the gateway's key, a preview never wakes one.
				return s.publicRefusal(rt, r, errdefs.Unauthorized(wire.CodePreviewUnauthorized,
					"sandbox %s is not running: a preview starts it only for an API key with scope %s", e.ref(), auth.ScopeSandboxesWrite))
			case rt.StartsInstance:
				if p, err = s.run(ctx, e); err != nil {
					return err
				}
			case rt.Lookup && rt.List:
				httpjson.Write(w, http.StatusOK, []struct{}{})
				return nil
			case rt.Lookup:
				return errdefs.NotFound(wire.CodeNotInCurrentInstance, "sandbox %s has no running instance: processes, sessions, terminals and contexts live only as long as the instance that made them", e.ref())
			default:
				state := stateOf(e, p)
				return s.publicRefusal(rt, r, errdefs.Conflict(wire.CodeSandboxNotRunning, "sandbox %s is %s: this call needs a running instance and does not start one; start it with \"sbx start %s\"", e.ref(), state, e.ref()))
			}
		}
		s.forward(w, r, p.api, hostPath(r, e.id), rt.Public)
		return nil
	}
}

// hostPath is r's path with the sandbox addressed by id, as its host knows
// it (the caller may have used the name).
func hostPath(r *http.Request, id string) string {
	return withID(r.URL.EscapedPath(), "/v1/sandboxes/", id)
}

// withID is the escaped path, which starts with prefix and a sandbox's id
// or name, with the sandbox named by id.
func withID(path, prefix, id string) string {
	rest := strings.TrimPrefix(path, prefix)
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		rest = rest[i:]
	} else {
		rest = ""
	}
	return prefix + url.PathEscape(id) + rest
}

// forward reverse-proxies r to the host at base with path rawPath (escaped):
// bodies and answers stream both ways unbuffered (NDJSON, file transfers)
// and an upgrade to a WebSocket is relayed (terminals, previews). The
// caller's key, checked by the gateway, is replaced by the caller's
// principal or the hosts' key (hostAuth); a public route keeps whatever
// credentials it came with (a preview token), unless they are a key of the
// gateway.
func (s *Server) forward(w http.ResponseWriter, r *http.Request, base, rawPath string, public bool) {
	target, err := url.Parse(base)
	if err != nil || target.Host == "" {
		httpjson.WriteError(w, errdefs.Unavailable(wire.CodeSandboxUnavailable, "the sbx host's address %q (node annotation sbx.dev/api) is not a URL", base))
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
				s.hostAuth(pr.In.Context(), pr.Out.Header, pr.In) // identity.go
			} else {
				pr.Out.Header.Del(auth.HeaderPrincipal) // only the gateway says who a caller is
			}
		},
		Transport:     s.cfg.Transport,
		FlushInterval: -1, // NDJSON lines reach the caller as the host writes them
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if r.Context().Err() != nil {
				return // the caller left
			}
			httpjson.WriteError(w, errdefs.Unavailable(wire.CodeSandboxUnavailable, "the sbx host at %s did not answer: %v", target.Host, err))
		},
	}
	rp.ServeHTTP(w, r)
}

// findFor finds the sandbox of r's path among those the caller sees. A
// public route (a preview) is not authenticated: with a key of the gateway
// it finds among that key's team's sandboxes (every team's for the admin
// key), without one only by id, "<name>--<team>" or a bare name of team
// default, as one host does (network.PreviewTarget).
func (s *Server) findFor(rt api.RouteInfo, r *http.Request) (entry, error) {
	ref := r.PathValue("id")
	ctx := r.Context()
	if !rt.Public {
		return s.cluster.find(ctx, ref)
	}
	if p, err := s.principal(r); err == nil {
		return s.cluster.find(auth.WithPrincipal(ctx, p), ref)
	}
	// No principal: the sandbox is found in the named system scope, and
	// the preview's own token is checked on the host.
	ctx = auth.System(ctx, "public preview lookup")
	id, name, team := network.PreviewTarget(ref)
	if id != "" {
		e, err := s.cluster.find(ctx, id)
		if err == nil && e.id != id {
			err = errdefs.NotFound(wire.CodeSandboxNotFound, "sandbox %q not found", ref)
		}
		return e, err
	}
	if team == "" {
		team = auth.DefaultTeam
	}
	return s.cluster.find(auth.WithPrincipal(r.Context(), auth.Principal{Team: team}), name)
}

// mayWake reports whether r's key may start a sandbox through a public
// route.
func (s *Server) mayWake(r *http.Request) bool {
	p, err := s.principal(r)
	return err == nil && p.Has(auth.ScopeSandboxesWrite)
}

// publicRefusal is err, except that a public route's caller without the
// gateway's key learns nothing of which sandboxes exist or run: one
// answer, as a private port of one host gives (internal/api/ports.go).
func (s *Server) publicRefusal(rt api.RouteInfo, r *http.Request, err error) error {
	if !rt.Public || s.callerHoldsGatewayKey(r) {
		return err
	}
	return errdefs.Unauthorized(wire.CodePreviewUnauthorized, "port %s of sandbox %s is private or the sandbox is not running: send the port's token (a stopped sandbox needs the API key to start)", r.PathValue("port"), r.PathValue("id"))
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
			return false, errdefs.NotFound(wire.CodeSandboxNotFound, "sandbox %s was deleted before it started", e.ref())
		case gone:
			return false, nil
		}
		seen, e = true, cur
		p = s.cluster.placementOf(e)
		if p.pod != nil {
			why = podProgress(p)
			if p.pod.Status.Phase == corev1.PodFailed {
				return false, errdefs.Unavailable(wire.CodeSandboxUnavailable, "sandbox %s failed to start on host %s: %s", e.ref(), p.node, why)
			}
		}
		return p.ready, nil
	})
	var apiErr *errdefs.Error
	if err != nil && !errors.As(err, &apiErr) {
		if errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
			return p, errdefs.Unavailable(wire.CodeSandboxUnavailable, "sandbox %s did not become ready within %s (%s); it stays asked to run", e.ref(), s.cfg.ReadyTimeout, why)
		}
		return p, errdefs.Unavailable(wire.CodeCancelled, "gave up waiting for sandbox %s to start: %v", e.ref(), err)
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
