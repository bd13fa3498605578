package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/sbxhq/sbx/sdk"
)

// The cost of the Daytona compatibility layer: an exec round trip of `true`
// in one sandbox, through sbx's own API (Go SDK), through the Daytona route
// with plain HTTP (the layer alone), and through Daytona's official
// TypeScript SDK in node (the layer plus the SDK), in the same run.
func init() {
	registerScenario(Scenario{Order: 92, Name: "Daytona SDK executeCommand", Run: runDaytonaBench})
}

// daytonaSDKDir holds the pinned SDK (scripts/npm-install.sh installs it).
const daytonaSDKDir = "integration/testdata/daytona"

func runDaytonaBench(env *Env, sys System) ([]result, error) {
	s, ok := sys.(*sbxSystem)
	if !ok {
		return nil, fmt.Errorf("%w: sbx only", errSkip)
	}
	if _, err := os.Stat(filepath.Join(daytonaSDKDir, "node_modules", "@daytonaio", "sdk")); err != nil {
		return nil, fmt.Errorf("%w: Daytona's SDK is not installed (scripts/npm-install.sh)", errSkip)
	}
	base, token, err := s.apiAddress()
	if err != nil {
		return nil, err
	}
	c, ctx := env.Client, context.Background()
	sb, err := c.CreateSandbox(ctx, sdk.CreateSandboxRequest{Name: "bench-daytona", Network: *sbxNetwork})
	if err != nil {
		return nil, err
	}
	defer c.DeleteSandbox(ctx, sb.ID, true)
	n := env.n(*execN, 10)
	out := []result{measure("exec round trip: sbx API (Go SDK)", "sbx", n, func() error {
		res, err := c.Exec(ctx, sb.ID, sdk.ExecRequest{Cmd: []string{"true"}})
		if err == nil && res.ExitCode != 0 {
			err = fmt.Errorf("exit code %d", res.ExitCode)
		}
		return err
	})}
	url := base + "/daytona/toolbox/" + sb.ID + "/process/execute"
	out = append(out, measure("exec round trip: Daytona route, plain HTTP", "sbx", n, func() error {
		req, _ := http.NewRequest("POST", url, strings.NewReader(`{"command":"true"}`))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var r struct{ ExitCode int }
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || resp.StatusCode != 200 || r.ExitCode != 0 {
			return fmt.Errorf("execute: %s %v exit %d", resp.Status, err, r.ExitCode)
		}
		return nil
	}))
	cmd := exec.Command("node", "bench.mjs")
	cmd.Dir = daytonaSDKDir
	cmd.Env = append(os.Environ(), "DAYTONA_API_URL="+base+"/daytona/api", "DAYTONA_API_KEY="+token,
		"SANDBOX_ID="+sb.ID, "N="+strconv.Itoa(n))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("node bench.mjs: %v: %s", err, stderr.Bytes())
	}
	var ms []float64
	if err := json.Unmarshal(bytes.TrimSpace(stdout), &ms); err != nil {
		return out, fmt.Errorf("node bench.mjs printed %q: %v", stdout, err)
	}
	return append(out, summarize("exec round trip: Daytona SDK executeCommand (node)", "sbx", "ms", ms)), nil
}

// apiAddress is the daemon's base URL (from its --listen) and admin key.
func (s *sbxSystem) apiAddress() (string, string, error) {
	i := slices.Index(s.cmd.Args, "--listen")
	if i < 0 || i+1 >= len(s.cmd.Args) {
		return "", "", fmt.Errorf("sbx serve was started without --listen")
	}
	tok, err := os.ReadFile(filepath.Join(s.dataDir, "admin.token"))
	if err != nil {
		return "", "", err
	}
	return "http://" + s.cmd.Args[i+1], strings.TrimSpace(string(tok)), nil
}
