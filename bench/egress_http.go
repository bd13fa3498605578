package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"

	"github.com/vishvananda/netns"

	"github.com/sbxhq/sbx/sdk"
)

// The HTTP egress proxy's added latency: requests from a bridge sandbox to
// a server "outside" (a network namespace the bench makes), first direct
// (no http section), then, on the same sandbox and server, through the
// proxy under an inject rule (a secret added to each request). Each
// request opens its own connection, as curl would. The client runs on the
// host but dials from inside the sandbox's network namespace, so its
// packets take the sandbox's path (veth, bridge, redirect) without any
// tool inside the sandbox adding noise.
func init() {
	registerScenario(Scenario{Order: 91, Name: "HTTP egress proxy", Run: runEgressHTTPBench})
}

func runEgressHTTPBench(env *Env, sys System) ([]result, error) {
	if sys.Name() != "sbx" {
		return nil, fmt.Errorf("%w: sbx only", errSkip)
	}
	c, ctx := env.Client, context.Background()
	server, cleanup, err := outsideServer()
	if err != nil {
		return nil, err
	}
	defer cleanup()
	if _, err := c.CreateSecret(ctx, sdk.CreateSecretRequest{Name: "bench-key", Value: "bench-secret-value",
		SecretHosts: sdk.SecretHosts{Hosts: []string{server.Addr().String()}, AllowHTTP: true}}); err != nil {
		return nil, err
	}
	defer c.DeleteSecret(ctx, "bench-key")
	sb, err := c.CreateSandbox(ctx, sdk.CreateSandboxRequest{Name: "bench-egress"})
	if err != nil {
		return nil, err
	}
	defer c.DeleteSandbox(ctx, sb.ID, true)
	ns, err := netns.GetFromPath(filepath.Join(env.Work, "sbx", "network", sb.ID, "netns"))
	if err != nil {
		return nil, fmt.Errorf("the sandbox's network namespace: %w", err)
	}
	defer ns.Close()
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return inNS(ns, func() (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, network, addr)
			})
		},
	}}
	url := "http://" + server.String() + "/"
	get := func(wantAuth bool) error {
		resp, err := hc.Get(url)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || (string(body) == "auth") != wantAuth {
			return fmt.Errorf("GET %s: %s %q (want the secret: %t)", url, resp.Status, body, wantAuth)
		}
		return nil
	}
	n := env.n(1000, 50)
	var out []result
	out = append(out, measure("HTTP GET from a sandbox, new connection: direct", "sbx", n, func() error { return get(false) }))
	rules := &sdk.HTTPEgress{Rules: []sdk.HTTPRule{{Host: server.Addr().String(), Action: sdk.HTTPActionInject,
		Inject: []sdk.HTTPInject{{Header: "Authorization", Secret: "bench-key"}}}}}
	if _, err := c.SetEgress(ctx, sb.ID, sdk.EgressPolicy{Mode: sdk.EgressAllowAll, HTTP: rules}); err != nil {
		return out, err
	}
	out = append(out, measure("HTTP GET from a sandbox, new connection: egress proxy (inject rule)", "sbx", n, func() error { return get(true) }))
	return out, nil
}

// inNS runs fn on this goroutine's thread switched into the network
// namespace ns: a socket fn makes keeps that namespace after the thread
// switches back.
func inNS[T any](ns netns.NsHandle, fn func() (T, error)) (T, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	orig, err := netns.Get()
	if err != nil {
		var zero T
		return zero, err
	}
	defer orig.Close()
	if err := netns.Set(ns); err != nil {
		var zero T
		return zero, err
	}
	v, ferr := fn()
	if err := netns.Set(orig); err != nil {
		panic(err) // this thread must not run on in the sandbox's namespace
	}
	return v, ferr
}

// outsideServer makes a network namespace with a veth to the host and an
// HTTP server on port 80 in it that answers "auth" when a request carries
// an Authorization header, "none" otherwise.
func outsideServer() (netip.AddrPort, func(), error) {
	subnet := netip.MustParsePrefix(freeSubnet())
	host, inside := subnet.Addr().Next(), subnet.Addr().Next().Next()
	name := fmt.Sprintf("sbxb-out-%06x", rand.IntN(1<<24))
	veth := fmt.Sprintf("sbxbo%06x", rand.IntN(1<<24))
	var undo []func()
	cleanup := func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	for _, args := range [][]string{
		{"ip", "netns", "add", name},
		{"ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", name},
		{"ip", "addr", "add", host.String() + "/24", "dev", veth},
		{"ip", "link", "set", veth, "up"},
		{"ip", "-n", name, "addr", "add", inside.String() + "/24", "dev", "eth0"},
		{"ip", "-n", name, "link", "set", "eth0", "up"},
	} {
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			cleanup()
			return netip.AddrPort{}, nil, fmt.Errorf("%v: %v: %s", args, err, out)
		}
		switch args[1] {
		case "netns":
			undo = append(undo, func() { exec.Command("ip", "netns", "del", name).Run() })
		case "link":
			if args[2] == "add" {
				undo = append(undo, func() { exec.Command("ip", "link", "del", veth).Run() })
			}
		}
	}
	ns, err := netns.GetFromName(name)
	if err != nil {
		cleanup()
		return netip.AddrPort{}, nil, err
	}
	defer ns.Close()
	addr := netip.AddrPortFrom(inside, 80)
	ln, err := inNS(ns, func() (net.Listener, error) { return net.Listen("tcp4", addr.String()) })
	if err != nil {
		cleanup()
		return netip.AddrPort{}, nil, err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			io.WriteString(w, "auth")
		} else {
			io.WriteString(w, "none")
		}
	})}
	go srv.Serve(ln)
	undo = append(undo, func() { srv.Close() })
	return addr, cleanup, nil
}
