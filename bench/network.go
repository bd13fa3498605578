package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/netip"
	"os/exec"
	"strings"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// The preview proxy against a direct connection: the same busybox httpd in
// a bridge sandbox, reached from the host at the sandbox's address, and
// through the daemon's path-based preview URL with the port's token.
func init() {
	registerScenario(Scenario{Order: 90, Name: "preview proxy", Run: runProxyBench})
}

const proxyBigMiB = 64

func runProxyBench(env *Env, sys System) ([]result, error) {
	if sys.Name() != "sbx" {
		return nil, fmt.Errorf("%w: sbx only", errSkip)
	}
	c, ctx := env.Client, context.Background()
	sb, err := c.CreateSandbox(ctx, sdk.CreateSandboxRequest{Name: "bench-proxy", MemoryMiB: 512})
	if err != nil {
		return nil, err
	}
	defer c.DeleteSandbox(ctx, sb.ID, true)
	res, err := c.Exec(ctx, sb.ID, sdk.ExecRequest{Shell: fmt.Sprintf(
		"mkdir -p /www && head -c 1024 /dev/zero > /www/small && head -c %d /dev/zero > /www/big && busybox httpd -p 8080 -h /www", proxyBigMiB<<20)})
	if err != nil || res.ExitCode != 0 {
		return nil, fmt.Errorf("start httpd: %v %s", err, res.Stderr)
	}
	port, err := c.ExposePort(ctx, sb.ID, sdk.ExposePortRequest{Port: 8080})
	if err != nil {
		return nil, err
	}
	info, err := c.GetNetwork(ctx, sb.ID)
	if err != nil {
		return nil, err
	}
	direct := "http://" + info.Address + ":8080/"
	proxied := port.PathURL
	hc := &http.Client{Timeout: time.Minute}
	get := func(url string) (int64, error) {
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("X-Sbx-Preview-Token", port.Token)
		resp, err := hc.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		n, err := io.Copy(io.Discard, resp.Body)
		if err == nil && resp.StatusCode != 200 {
			err = fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		return n, err
	}
	// httpd may take a moment to listen.
	for i := 0; ; i++ {
		if _, err := get(proxied + "small"); err == nil {
			break
		} else if i == 100 {
			return nil, err
		}
		time.Sleep(50 * time.Millisecond)
	}

	n := env.n(1000, 50)
	var out []result
	for _, t := range []struct{ name, base string }{{"direct", direct}, {"proxied", proxied}} {
		out = append(out, measure("GET 1 KiB from a sandbox: "+t.name, "sbx", n, func() error {
			_, err := get(t.base + "small")
			return err
		}))
	}
	for _, t := range []struct{ name, base string }{{"direct", direct}, {"proxied", proxied}} {
		var rates []float64
		for range env.n(10, 2) {
			start := time.Now()
			got, err := get(t.base + "big")
			if err != nil {
				return out, err
			}
			if got != proxyBigMiB<<20 {
				return out, fmt.Errorf("downloaded %d bytes, want %d", got, proxyBigMiB<<20)
			}
			rates = append(rates, proxyBigMiB/time.Since(start).Seconds())
		}
		out = append(out, summarize(fmt.Sprintf("GET %d MiB from a sandbox: %s", proxyBigMiB, t.name), "sbx", "MiB/s", rates))
	}
	return out, nil
}

// benchNet gives the bench daemon a bridge and subnet of its own, so a bench
// can run beside a daemon or another bench, and removes them at the end.
var benchNet benchNetwork

type benchNetwork struct{ bridge, subnet string }

func (b *benchNetwork) args() []string {
	if b.bridge == "" {
		b.bridge = fmt.Sprintf("sbxb%06x", rand.IntN(1<<24))
		b.subnet = freeSubnet()
	}
	return []string{"--bridge", b.bridge, "--subnet", b.subnet}
}

func (b *benchNetwork) remove() {
	if b.bridge != "" {
		exec.Command("nft", "delete", "table", "inet", b.bridge).Run()
		exec.Command("ip", "link", "del", b.bridge).Run()
	}
}

// freeSubnet picks a /24 in 10.192.0.0/10 that no route of the host overlaps.
func freeSubnet() string {
	out, _ := exec.Command("ip", "-4", "route", "show", "table", "all").Output()
	var routes []netip.Prefix
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) > 1 && (f[0] == "local" || f[0] == "broadcast") {
			f = f[1:]
		}
		if len(f) == 0 {
			continue
		}
		dst := f[0]
		if !strings.Contains(dst, "/") {
			dst += "/32"
		}
		if p, err := netip.ParsePrefix(dst); err == nil && p.Bits() > 0 {
			routes = append(routes, p)
		}
	}
next:
	for {
		p := netip.MustParsePrefix(fmt.Sprintf("10.%d.%d.0/24", 192+rand.IntN(64), rand.IntN(256)))
		for _, r := range routes {
			if r.Overlaps(p) {
				continue next
			}
		}
		return p.String()
	}
}
