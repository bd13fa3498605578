package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sbxhq/sbx/sdk"
)

// E2B's SDK against sbx's own API, in the same run on the same daemon:
// commands.run('true') (E2B: /bin/bash -l -c as user "user", a process
// started over Connect-RPC and its output followed) against sbx's exec of
// `true`, and runCode('1+1') in the default context against a run in a
// warm sbx context. Needs node, the pinned SDKs (scripts/npm-install.sh)
// and the python image; without them the rows are skipped. -scenarios E2B
// runs these rows alone.

var e2bSDKDir = flag.String("e2b-sdk-dir", "integration/testdata/e2b", "directory with E2B's pinned npm SDKs and bench.mjs")

func init() { registerNamedSbxOnly("E2B SDK", benchE2B) }

func benchE2B(env *Env) []result {
	if _, err := os.Stat(filepath.Join(*e2bSDKDir, "node_modules", "@e2b", "code-interpreter")); err != nil {
		log.Printf("skipping the E2B SDK rows: %v (run scripts/npm-install.sh)", err)
		return nil
	}
	f, err := os.Open(*pythonImage)
	if err != nil {
		log.Printf("skipping the E2B SDK rows: %v (build the image with scripts/build-python-image.sh)", err)
		return nil
	}
	defer f.Close()
	c, ctx := env.Client, context.Background()
	if _, err := c.ImportImage(ctx, "python", f); err != nil {
		return []result{failed("E2B SDK", "sbx", err)}
	}
	defer c.RemoveImage(ctx, "python")
	n := env.n(100, 5)

	// sbx's own API.
	sb, err := c.CreateSandbox(ctx, sdk.CreateSandboxRequest{Image: "python"})
	if err != nil {
		return []result{failed("E2B SDK", "sbx", err)}
	}
	defer c.DeleteSandbox(ctx, sb.ID, true)
	cx, err := c.CreateContext(ctx, sb.ID, sdk.CreateContextRequest{Language: "python"})
	if err != nil {
		return []result{failed("E2B SDK", "sbx", err)}
	}
	out := []result{
		measure("exec `true`: sbx API vs E2B commands.run", "sbx API", n, func() error {
			res, err := c.Exec(ctx, sb.ID, sdk.ExecRequest{Cmd: []string{"true"}})
			if err == nil && res.ExitCode != 0 {
				err = fmt.Errorf("exit %d", res.ExitCode)
			}
			return err
		}),
		measure("run `1+1`: sbx API vs E2B runCode", "sbx API", n, func() error {
			return want2(c.RunCode(ctx, sb.ID, cx.ID, sdk.RunCodeRequest{Code: "1+1"}, nil))
		}),
	}

	// The same through E2B's SDK (a node process timing its own calls).
	tok, err := os.ReadFile(filepath.Join(env.Work, "sbx", "admin.token"))
	if err != nil {
		return append(out, failed("E2B SDK", "E2B SDK", err))
	}
	script, _ := filepath.Abs(filepath.Join(*e2bSDKDir, "bench.mjs"))
	cmd := exec.Command("node", script, strconv.Itoa(n))
	cmd.Dir = *e2bSDKDir
	cmd.Env = append(os.Environ(), "E2B_API_URL="+c.Host()+"/e2b", "E2B_SANDBOX_URL="+c.Host()+"/e2b/sandbox",
		"E2B_API_KEY="+strings.TrimSpace(string(tok)))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return append(out, failed("E2B SDK", "E2B SDK", fmt.Errorf("%v: %s", err, stderr.String())))
	}
	var samples struct{ Run, Code []float64 }
	if err := json.Unmarshal(stdout.Bytes(), &samples); err != nil {
		return append(out, failed("E2B SDK", "E2B SDK", fmt.Errorf("bench.mjs printed %q: %v", stdout.String(), err)))
	}
	return append(out,
		summarize("exec `true`: sbx API vs E2B commands.run", "E2B SDK", "ms", samples.Run),
		summarize("run `1+1`: sbx API vs E2B runCode", "E2B SDK", "ms", samples.Code))
}
