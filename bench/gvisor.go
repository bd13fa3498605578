package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/sbxhq/sbx/internal/runtime"
	"github.com/sbxhq/sbx/sdk"
)

// Pause, resume, fork and memory snapshots: sbx-only, no peer does them.
// Class gvisor idle and at 64 MiB and 512 MiB of used memory (random data in the
// sandbox's tmpfs /tmp, which lives in gVisor's memory and so in every
// checkpoint), and the container class's freezer pause for comparison.
//
// The sbx daemon runs the runsc it finds by default (sbx's own from
// scripts/setup.sh, on systrap, else Debian's). With -runsc the gvisor rows
// are measured a second time, in the same run, on a second sbx daemon that
// drives that runsc binary (system "sbx (runsc PLATFORM)"), so two gVisor
// builds can be compared side by side, e.g. against Debian's:
//
//	go run ./bench -sbx /tmp/sbx -systems sbx -scenarios gvisor \
//		-runsc /usr/bin/runsc -runsc-platform ptrace

var (
	gvisorN       = flag.Int("gvisor-n", 5, "runs of each pause/resume/fork/snapshot measurement")
	altRunsc      = flag.String("runsc", "", "also measure the gvisor rows with this runsc binary, on a second sbx daemon")
	altRunscPlatf = flag.String("runsc-platform", "", `gVisor platform for -runsc ("systrap", "ptrace", "kvm"; default: sbx's)`)
)

func init() {
	registerScenario(Scenario{Order: 100, Name: "gvisor: pause, resume, fork, memory snapshot", Run: runGVisor})
}

func runGVisor(env *Env, sys System) ([]result, error) {
	if sys.Name() != "sbx" {
		return nil, fmt.Errorf("%w: sbx only", errSkip)
	}
	if _, _, err := runtime.FindRunsc(); err != nil {
		return nil, fmt.Errorf("%w: runsc is not installed", errSkip)
	}
	n := env.n(*gvisorN, 1)
	out := benchContainerPause(env.Client, n)
	out = append(out, benchGVisor(env, env.Client, "sbx", n)...)
	if *altRunsc == "" {
		return out, nil
	}
	alt, err := openAltSbx(env)
	if err != nil {
		return append(out, failed("gvisor", altName(), err)), nil
	}
	defer alt.Close()
	return append(out, benchGVisor(env, alt.client, alt.Name(), n)...), nil
}

func benchGVisor(env *Env, c *sdk.Client, sys string, n int) []result {
	var out []result
	for _, mib := range []int{0, 64, 512} { // 0: an idle sandbox, a shell and a web server
		if env.Quick && mib > 64 {
			continue
		}
		out = append(out, benchGVisorAt(c, sys, n, mib)...)
	}
	return out
}

func altName() string {
	if *altRunscPlatf != "" {
		return "sbx (runsc " + *altRunscPlatf + ")"
	}
	return "sbx (" + *altRunsc + ")"
}

// openAltSbx starts the -runsc daemon: sbx serve reads the runsc settings
// from the environment (SBX_RUNSC, SBX_RUNSC_PLATFORM).
func openAltSbx(env *Env) (*secondSbx, error) {
	os.Setenv("SBX_RUNSC", *altRunsc)
	os.Setenv("SBX_RUNSC_PLATFORM", *altRunscPlatf)
	defer os.Unsetenv("SBX_RUNSC")
	defer os.Unsetenv("SBX_RUNSC_PLATFORM")
	return openSecondSbx(env, *sbxBin, altName(), "alt-runsc")
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

func benchGVisorAt(c *sdk.Client, sys string, n, mib int) []result {
	ctx := context.Background()
	at := fmt.Sprintf(" (gvisor, %d MiB used)", mib)
	if mib == 0 {
		at = " (gvisor, idle)"
	}
	sb, err := gvisorBox(c, mib)
	if err != nil {
		return []result{failed("gvisor sandbox"+at, sys, err)}
	}
	defer c.DeleteSandboxCascade(ctx, sb.ID, true)
	var out []result

	// Pause and resume, timed apart; a resume is done when the agent
	// answers, and the web server must answer right after.
	var pause, resume []float64
	for i := 0; i < n; i++ {
		t0 := time.Now()
		if _, err := c.PauseSandbox(ctx, sb.ID); err != nil {
			return append(out, failed("pause"+at, sys, err))
		}
		t1 := time.Now()
		if _, err := c.ResumeSandbox(ctx, sb.ID); err != nil {
			return append(out, failed("resume"+at, sys, err))
		}
		pause = append(pause, ms(t1.Sub(t0)))
		resume = append(resume, ms(time.Since(t1)))
		if err := run(c, sb.ID, "wget -qO- http://127.0.0.1:8080/ > /dev/null"); err != nil {
			return append(out, failed("resume"+at, sys, err))
		}
	}
	out = append(out, summarize("pause"+at, sys, "ms", pause), summarize("resume"+at, sys, "ms", resume))

	// Forks: the call returns when every child runs.
	if mib == 64 {
		for _, count := range []int{1, 8} {
			name := fmt.Sprintf("fork, %d child%s%s", count, map[bool]string{true: "ren", false: ""}[count > 1], at)
			out = append(out, measureThenClean(name, sys, n, func() (func(), error) {
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
		return append(out, failed("memory snapshot → first answer"+at, sys, err))
	}
	defer c.DeleteSnapshot(ctx, snapName)
	out = append(out, measureThenClean("memory snapshot → first answer"+at, sys, n, func() (func(), error) {
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
func measureThenClean(name, sys string, n int, f func() (func(), error)) result {
	var samples []float64
	for i := 0; i < n; i++ {
		start := time.Now()
		clean, err := f()
		elapsed := time.Since(start)
		if err != nil {
			log.Printf("%s: %v", name, err)
			return failed(name, sys, err)
		}
		clean()
		samples = append(samples, ms(elapsed))
	}
	return summarize(name, sys, "ms", samples)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
