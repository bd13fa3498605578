package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os/exec"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// Pause, resume, fork and memory snapshots: sbx-only, no peer does them.
// Class gvisor at 64 MiB and 512 MiB of used memory (random data in the
// sandbox's tmpfs /tmp, which lives in gVisor's memory and so in every
// checkpoint), and the container class's freezer pause for comparison.

var gvisorN = flag.Int("gvisor-n", 5, "runs of each pause/resume/fork/snapshot measurement")

func init() { registerSbxOnly(benchGVisor) }

func benchGVisor(env *Env) []result {
	if _, err := exec.LookPath("runsc"); err != nil {
		log.Printf("skipping gvisor scenarios: runsc is not installed")
		return nil
	}
	c, n := env.Client, env.n(*gvisorN, 1)
	var out []result
	out = append(out, benchContainerPause(c, n)...)
	for _, mib := range []int{64, 512} {
		if env.Quick && mib > 64 {
			continue
		}
		out = append(out, benchGVisorAt(c, n, mib)...)
	}
	return out
}

// gvisorBox creates a gvisor sandbox whose memory holds mib MiB of random
// data and a web server, the workload every child must find running.
func gvisorBox(c *sdk.Client, mib int) (*sdk.Sandbox, error) {
	ctx := context.Background()
	sb, err := c.CreateSandbox(ctx, sdk.CreateSandboxRequest{Class: "gvisor", MemoryMiB: mib + 512})
	if err != nil {
		return nil, err
	}
	fill := fmt.Sprintf(`dd if=/dev/urandom of=/tmp/fill bs=1M count=%d 2>/dev/null
		mkdir -p /srv && echo up > /srv/index.html
		(httpd -f -p 127.0.0.1:8080 -h /srv > /dev/null 2>&1 &)`, mib)
	if err := run(c, sb.ID, fill); err != nil {
		c.DeleteSandbox(ctx, sb.ID, true)
		return nil, err
	}
	return sb, nil
}

// run runs a shell command in a sandbox; a non-zero exit is an error.
func run(c *sdk.Client, id, shell string) error {
	res, err := c.Exec(context.Background(), id, sdk.ExecRequest{Shell: shell, TimeoutSeconds: 300})
	if err == nil && res.ExitCode != 0 {
		err = fmt.Errorf("%q: exit %d: %s", shell, res.ExitCode, res.Stderr)
	}
	return err
}

func benchGVisorAt(c *sdk.Client, n, mib int) []result {
	ctx := context.Background()
	at := fmt.Sprintf(" (gvisor, %d MiB used)", mib)
	sb, err := gvisorBox(c, mib)
	if err != nil {
		return []result{failed("gvisor sandbox"+at, "sbx", err)}
	}
	defer c.DeleteSandboxCascade(ctx, sb.ID, true)
	var out []result

	// Pause and resume, timed apart; a resume is done when the agent
	// answers, and the web server must answer right after.
	var pause, resume []float64
	for i := 0; i < n; i++ {
		t0 := time.Now()
		if _, err := c.PauseSandbox(ctx, sb.ID); err != nil {
			return append(out, failed("pause"+at, "sbx", err))
		}
		t1 := time.Now()
		if _, err := c.ResumeSandbox(ctx, sb.ID); err != nil {
			return append(out, failed("resume"+at, "sbx", err))
		}
		pause = append(pause, ms(t1.Sub(t0)))
		resume = append(resume, ms(time.Since(t1)))
		if err := run(c, sb.ID, "wget -qO- http://127.0.0.1:8080/ > /dev/null"); err != nil {
			return append(out, failed("resume"+at, "sbx", err))
		}
	}
	out = append(out, summarize("pause"+at, "sbx", "ms", pause), summarize("resume"+at, "sbx", "ms", resume))

	// Forks: the call returns when every child runs.
	if mib == 64 {
		for _, count := range []int{1, 8} {
			name := fmt.Sprintf("fork, %d child%s%s", count, map[bool]string{true: "ren", false: ""}[count > 1], at)
			out = append(out, measureThenClean(name, n, func() (func(), error) {
				res, err := c.ForkSandbox(ctx, sb.ID, sdk.ForkRequest{Count: count})
				if err != nil {
					return nil, err
				}
				return func() {
					for _, f := range res.Forks {
						c.DeleteSandbox(ctx, f.ID, true)
					}
				}, nil
			}))
		}
	}

	// A new sandbox from a memory snapshot, until its web server answers.
	snapName := fmt.Sprintf("bench-%d", mib)
	if _, err := c.CreateSnapshot(ctx, sb.ID, sdk.CreateSnapshotRequest{Name: snapName, IncludeMemory: true}); err != nil {
		return append(out, failed("memory snapshot → first answer"+at, "sbx", err))
	}
	defer c.DeleteSnapshot(ctx, snapName)
	out = append(out, measureThenClean("memory snapshot → first answer"+at, n, func() (func(), error) {
		kid, err := c.CreateSandbox(ctx, sdk.CreateSandboxRequest{Snapshot: snapName})
		if err != nil {
			return nil, err
		}
		clean := func() { c.DeleteSandbox(ctx, kid.ID, true) }
		if err := run(c, kid.ID, "wget -qO- http://127.0.0.1:8080/ > /dev/null"); err != nil {
			clean()
			return nil, err
		}
		return clean, nil
	}))
	return out
}

// benchContainerPause times the freezer pause and thaw of a container.
func benchContainerPause(c *sdk.Client, n int) []result {
	ctx := context.Background()
	sb, err := c.CreateSandbox(ctx, sdk.CreateSandboxRequest{})
	if err != nil {
		return []result{failed("pause (container)", "sbx", err)}
	}
	defer c.DeleteSandbox(ctx, sb.ID, true)
	var pause, resume []float64
	for i := 0; i < n; i++ {
		t0 := time.Now()
		if _, err := c.PauseSandbox(ctx, sb.ID); err != nil {
			return []result{failed("pause (container)", "sbx", err)}
		}
		t1 := time.Now()
		if _, err := c.ResumeSandbox(ctx, sb.ID); err != nil {
			return []result{failed("resume (container)", "sbx", err)}
		}
		pause, resume = append(pause, ms(t1.Sub(t0))), append(resume, ms(time.Since(t1)))
	}
	return []result{summarize("pause (container, freezer)", "sbx", "ms", pause), summarize("resume (container, freezer)", "sbx", "ms", resume)}
}

// measureThenClean times f n times; the cleanup it returns is not timed.
func measureThenClean(name string, n int, f func() (func(), error)) result {
	var samples []float64
	for i := 0; i < n; i++ {
		start := time.Now()
		clean, err := f()
		elapsed := time.Since(start)
		if err != nil {
			log.Printf("%s: %v", name, err)
			return failed(name, "sbx", err)
		}
		clean()
		samples = append(samples, ms(elapsed))
	}
	return summarize(name, "sbx", "ms", samples)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
