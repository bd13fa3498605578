// Command grader grades untrusted submissions in parallel, each in a fresh
// sandbox taken from a warm pool, with a CPU share, a memory limit, a time
// limit and no network; it prints a verdict per submission, the timings and
// the throughput.
//
//	SBX_HOST=http://127.0.0.1:7423 SBX_TOKEN=… go run ./examples/grader -n 200 -parallel 16
//
// See README.md.
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// Verdicts.
const (
	Pass       = "pass"
	Fail       = "fail"        // ran, wrong answer or non-zero exit
	Timeout    = "timeout"     // hit the time limit
	OOM        = "oom"         // killed by the memory limit's OOM killer
	NetRefused = "net-refused" // tried the network, which a grading sandbox has none of
	Error      = "error"       // sbx could not run it (never the submission's fault)
)

// Result is one submission's grade.
type Result struct {
	Submission
	Verdict string
	Detail  string
	Took    time.Duration // from asking for a sandbox to its deletion
	// The parts of Took: taking a sandbox from the pool, running the cases,
	// deleting the sandbox.
	Take, Run, Delete time.Duration
}

type config struct {
	pool      string
	parallel  int
	warm      int
	timeout   time.Duration
	memoryMiB int
	cpu       float64
	image     string
}

func main() {
	var cfg config
	n := flag.Int("n", 200, "how many bundled submissions to grade")
	dir := flag.String("submissions", "", "grade the files of this directory instead of the bundled submissions")
	flag.IntVar(&cfg.parallel, "parallel", 16, "submissions graded at once")
	flag.IntVar(&cfg.warm, "warm", 64, "sandboxes the pool has ready before grading starts (at most 100); it refills while grading")
	flag.DurationVar(&cfg.timeout, "timeout", 5*time.Second, "time limit per test case")
	flag.IntVar(&cfg.memoryMiB, "memory", 64, "memory limit per sandbox, MiB")
	flag.Float64Var(&cfg.cpu, "cpu", 0.5, "CPU limit per sandbox, cores")
	flag.StringVar(&cfg.image, "image", "", "image of the grading sandboxes (default: the daemon's base image)")
	flag.StringVar(&cfg.pool, "pool", "grader", "name of the warm pool (made, and deleted at the end)")
	flag.Parse()
	log.SetFlags(0)

	subs := bundled(*n)
	if *dir != "" {
		var err error
		if subs, err = fromDir(*dir); err != nil {
			log.Fatalf("grader: %v", err)
		}
	}
	if err := run(context.Background(), cfg, subs); err != nil {
		log.Fatalf("grader: %v", err)
	}
}

func run(ctx context.Context, cfg config, subs []Submission) error {
	c, err := sdk.FromEnv()
	if err != nil {
		return err
	}
	// The pool's template is every grading sandbox's shape: the limits, and
	// network "none" (loopback only: no route out, no DNS).
	warmStart := time.Now()
	_, err = c.CreatePool(ctx, sdk.CreatePoolRequest{
		Name: cfg.pool,
		Template: sdk.PoolTemplate{
			Image: cfg.image, CPU: cfg.cpu, MemoryMiB: cfg.memoryMiB, PidsLimit: 64, Network: sdk.NetworkNone,
		},
		Min: cfg.warm, Max: 100,
	})
	if err != nil {
		return fmt.Errorf("create the warm pool: %w", err)
	}
	defer c.DeletePool(context.Background(), cfg.pool)
	if err := waitWarm(ctx, c, cfg.pool, cfg.warm); err != nil {
		return err
	}
	fmt.Printf("warm pool %q: %d sandboxes ready in %s\n", cfg.pool, cfg.warm, time.Since(warmStart).Round(time.Millisecond))

	results := make([]Result, len(subs))
	jobs := make(chan int)
	var wg sync.WaitGroup
	start := time.Now()
	for range cfg.parallel {
		wg.Go(func() {
			for i := range jobs {
				results[i] = grade(ctx, c, cfg, subs[i])
			}
		})
	}
	for i := range subs {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	wall := time.Since(start)

	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SUBMISSION\tVERDICT\tMS\tDETAIL")
	counts := map[string]int{}
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", r.Name, r.Verdict, r.Took.Milliseconds(), r.Detail)
		counts[r.Verdict]++
	}
	tw.Flush()

	var summary []string
	for _, v := range []string{Pass, Fail, Timeout, OOM, NetRefused, Error} {
		summary = append(summary, fmt.Sprintf("%s %d", v, counts[v]))
	}
	fmt.Printf("verdicts: %s\n", strings.Join(summary, ", "))
	fmt.Printf("graded %d submissions in %s, %d at a time: %.1f submissions/s\n",
		len(results), wall.Round(time.Millisecond), cfg.parallel, float64(len(results))/wall.Seconds())
	all := func(r Result) time.Duration { return r.Took }
	fmt.Printf("per submission, all: %s\n", percentiles(results, "", all))
	fmt.Printf("per submission, passing: %s\n", percentiles(results, Pass, all))
	fmt.Printf("  take a sandbox: %s\n", percentiles(results, "", func(r Result) time.Duration { return r.Take }))
	fmt.Printf("  run the cases, passing: %s\n", percentiles(results, Pass, func(r Result) time.Duration { return r.Run }))
	fmt.Printf("  delete the sandbox: %s\n", percentiles(results, "", func(r Result) time.Duration { return r.Delete }))
	if p, err := c.GetPool(ctx, cfg.pool); err == nil {
		fmt.Printf("pool: %d sandboxes taken warm, %d started cold\n", p.Adopted, p.Missed)
	}
	if counts[Error] > 0 {
		return fmt.Errorf("%d submissions could not be graded", counts[Error])
	}
	return nil
}

// waitWarm waits until the pool has want sandboxes ready.
func waitWarm(ctx context.Context, c *sdk.Client, pool string, want int) error {
	deadline := time.Now().Add(5 * time.Minute)
	for {
		p, err := c.GetPool(ctx, pool)
		if err != nil {
			return err
		}
		if p.Ready >= want {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pool %s: %d of %d sandboxes ready after 5 minutes", pool, p.Ready, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// grade runs one submission against every case in a sandbox of its own,
// which is deleted afterwards: nothing one submission does is seen by the
// next.
func grade(ctx context.Context, c *sdk.Client, cfg config, s Submission) Result {
	r := Result{Submission: s}
	start := time.Now()
	sb, err := c.CreateSandbox(ctx, sdk.CreateSandboxRequest{Pool: cfg.pool, Labels: map[string]string{"grader": s.Name}})
	r.Take = time.Since(start)
	if err != nil {
		r.Verdict, r.Detail = Error, err.Error()
		return r
	}
	r.Verdict, r.Detail = judge(ctx, c, cfg, sb.ID, s)
	r.Run = time.Since(start) - r.Take
	if err := c.DeleteSandbox(ctx, sb.ID, true); err != nil {
		r.Verdict, r.Detail = Error, "delete: "+err.Error()
	}
	r.Took = time.Since(start)
	r.Delete = r.Took - r.Take - r.Run
	return r
}

func judge(ctx context.Context, c *sdk.Client, cfg config, id string, s Submission) (verdict, detail string) {
	for i, tc := range cases {
		res, err := c.Exec(ctx, id, sdk.ExecRequest{Shell: s.Script, Stdin: tc.stdin, TimeoutSeconds: cfg.timeout.Seconds()})
		if err != nil {
			return Error, err.Error()
		}
		if v, d := classify(res, tc.want); v != Pass {
			return v, fmt.Sprintf("case %d: %s", i+1, d)
		}
	}
	return Pass, ""
}

// classify turns one run's outcome into a verdict. The order matters: a
// run that timed out was killed with SIGKILL too.
func classify(res *sdk.ExecResult, want string) (verdict, detail string) {
	got := strings.TrimSpace(res.Stdout)
	switch {
	case res.TimedOut:
		return Timeout, fmt.Sprintf("no answer within %d ms", res.DurationMs)
	// Only the OOM killer sends SIGKILL inside a grading sandbox; a shell
	// whose child it killed exits 137 (128 + SIGKILL) instead.
	case res.Signal == "SIGKILL" || res.ExitCode == 137:
		return OOM, "killed by the memory limit"
	// What connect(2) answers in a sandbox without a network.
	case res.ExitCode != 0 && strings.Contains(res.Stderr, "Network is unreachable"):
		return NetRefused, firstLine(res.Stderr)
	case res.ExitCode != 0:
		return Fail, fmt.Sprintf("exit %d: %s", res.ExitCode, firstLine(res.Stderr))
	case got != want:
		return Fail, fmt.Sprintf("answered %q, want %q", truncate(got, 40), want)
	}
	return Pass, ""
}

// percentiles reports p50 and p99 of the time part picks of the results
// with verdict v ("" for all).
func percentiles(results []Result, v string, part func(Result) time.Duration) string {
	var ds []time.Duration
	for _, r := range results {
		if v == "" || r.Verdict == v {
			ds = append(ds, part(r))
		}
	}
	if len(ds) == 0 {
		return "none"
	}
	slices.SortFunc(ds, cmp.Compare)
	at := func(p float64) time.Duration { return ds[min(len(ds)-1, int(p*float64(len(ds))))] }
	return fmt.Sprintf("p50 %d ms, p99 %d ms (%d submissions)", at(0.50).Milliseconds(), at(0.99).Milliseconds(), len(ds))
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return truncate(s, 80)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
