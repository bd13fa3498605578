// Command bench measures sbx against raw runc on the same machine in the same
// run and prints p50/p95/p99 as a markdown table and JSON.
//
//	go build -o /tmp/sbx ./cmd/sbx && sudo go run ./bench -sbx /tmp/sbx
//
// It starts its own daemon on a temporary data dir and removes everything it
// made when it ends.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// result is one scenario on one system.
type result struct {
	Scenario string  `json:"scenario"`
	System   string  `json:"system"`
	N        int     `json:"n"`
	P50ms    float64 `json:"p50Ms"`
	P95ms    float64 `json:"p95Ms"`
	P99ms    float64 `json:"p99Ms"`
}

func main() {
	sbxBin := flag.String("sbx", "", "path of the sbx binary (built with CGO_ENABLED=0)")
	execN := flag.Int("exec-n", 300, "exec round trips per system")
	createN := flag.Int("create-n", 30, "create→first exec runs per system")
	jsonOut := flag.String("json", "", "also write the results as JSON to this file")
	flag.Parse()
	if *sbxBin == "" {
		log.Fatal("pass -sbx PATH: build it with `CGO_ENABLED=0 go build -o /tmp/sbx ./cmd/sbx`")
	}
	if os.Geteuid() != 0 {
		log.Fatal("bench must run as root: it runs containers")
	}
	work, err := os.MkdirTemp("", "sbx-bench-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(work)

	d, err := startDaemon(*sbxBin, filepath.Join(work, "data"))
	if err != nil {
		log.Fatal(err)
	}
	defer d.stop()

	var results []result
	results = append(results, benchSbxExec(d.client, *execN))
	results = append(results, benchSbxCreate(d.client, *createN))
	rootfs, err := baseRootfs(filepath.Join(work, "data"))
	if err != nil {
		log.Fatal(err)
	}
	r := &rawRunc{root: filepath.Join(work, "runc-root"), dir: filepath.Join(work, "runc"), rootfs: rootfs}
	results = append(results, r.benchExec(*execN/3))
	results = append(results, r.benchCreate(*createN))

	printTable(results)
	if *jsonOut != "" {
		b, _ := json.MarshalIndent(results, "", "  ")
		if err := os.WriteFile(*jsonOut, b, 0o644); err != nil {
			log.Fatal(err)
		}
	}
}

// measure runs f n times and summarises the durations.
func measure(scenario, system string, n int, f func() error) result {
	var ds []time.Duration
	for i := 0; i < n; i++ {
		start := time.Now()
		if err := f(); err != nil {
			log.Fatalf("%s on %s: %v", scenario, system, err)
		}
		ds = append(ds, time.Since(start))
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	pct := func(p float64) float64 {
		i := int(p * float64(len(ds)-1))
		return float64(ds[i].Microseconds()) / 1000
	}
	return result{Scenario: scenario, System: system, N: n, P50ms: pct(0.50), P95ms: pct(0.95), P99ms: pct(0.99)}
}

func printTable(results []result) {
	base := map[string]float64{}
	for _, r := range results {
		if r.System == "sbx" {
			base[r.Scenario] = r.P50ms
		}
	}
	fmt.Println("| scenario | system | n | p50 ms | p95 ms | p99 ms | sbx/peer p50 |")
	fmt.Println("|---|---|---:|---:|---:|---:|---:|")
	for _, r := range results {
		ratio := "—"
		if r.System != "sbx" && r.P50ms > 0 {
			ratio = fmt.Sprintf("%.2f", base[r.Scenario]/r.P50ms)
		}
		fmt.Printf("| %s | %s | %d | %.2f | %.2f | %.2f | %s |\n", r.Scenario, r.System, r.N, r.P50ms, r.P95ms, r.P99ms, ratio)
	}
}

// sbx

type daemon struct {
	cmd    *exec.Cmd
	client *sdk.Client
}

func startDaemon(bin, dataDir string) (*daemon, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dataDir, "..", "daemon.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "serve", "--data-dir", dataDir, "--listen", addr)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			return nil, fmt.Errorf("daemon did not start: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	tok, err := os.ReadFile(filepath.Join(dataDir, "admin.token"))
	if err != nil {
		return nil, err
	}
	return &daemon{cmd: cmd, client: sdk.NewClient("http://"+addr, strings.TrimSpace(string(tok)))}, nil
}

// stop deletes every sandbox, then stops the daemon.
func (d *daemon) stop() {
	ctx := context.Background()
	if list, err := d.client.ListSandboxes(ctx, sdk.ListOptions{}); err == nil {
		for _, sb := range list {
			d.client.DeleteSandbox(ctx, sb.ID, true)
		}
	}
	d.cmd.Process.Signal(syscall.SIGTERM)
	d.cmd.Wait()
}

func benchSbxExec(c *sdk.Client, n int) result {
	ctx := context.Background()
	sb, err := c.CreateSandbox(ctx, sdk.CreateSandboxRequest{})
	if err != nil {
		log.Fatal(err)
	}
	defer c.DeleteSandbox(ctx, sb.ID, true)
	return measure("exec round trip (`true`)", "sbx", n, func() error {
		res, err := c.Exec(ctx, sb.ID, sdk.ExecRequest{Cmd: []string{"true"}})
		if err == nil && res.ExitCode != 0 {
			err = fmt.Errorf("exit %d", res.ExitCode)
		}
		return err
	})
}

func benchSbxCreate(c *sdk.Client, n int) result {
	ctx := context.Background()
	var ids []string
	r := measure("create → first exec", "sbx", n, func() error {
		sb, err := c.CreateSandbox(ctx, sdk.CreateSandboxRequest{})
		if err != nil {
			return err
		}
		ids = append(ids, sb.ID)
		_, err = c.Exec(ctx, sb.ID, sdk.ExecRequest{Cmd: []string{"true"}})
		return err
	})
	for _, id := range ids {
		c.DeleteSandbox(ctx, id, true)
	}
	return r
}
