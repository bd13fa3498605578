package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/sbxhq/sbx/sdk"
)

// Create → first exec through the Kubernetes gateway (`sbx gateway`), next
// to the same on the single-host daemon the run started, in the same run:
// what the cluster path adds (a Sandbox object, agent-sandbox's controller,
// kube-scheduler, the virtual-kubelet host creating the sandbox, the
// gateway's proxy hop). It runs only when a cluster is there:
//
//	sbx gateway --kubeconfig K --admin-token-file T --listen 127.0.0.1:7480 &
//	go run ./bench -sbx /tmp/sbx -systems sbx -scenarios gateway \
//		-gateway http://127.0.0.1:7480 -gateway-token-file T
//
// integration/kube_gateway_test.go starts such a cluster on one machine
// (two sbx hosts, a real control plane) and, with SBX_BENCH_GATEWAY=1,
// runs this scenario's measurement against it and logs the table.

var (
	gatewayURL       = flag.String("gateway", "", "URL of an sbx gateway: also measure create → first exec through it")
	gatewayTokenFile = flag.String("gateway-token-file", "", "file holding the gateway's admin key")
)

const gatewayScenario = "create → first exec (gateway vs one host)"

func init() {
	registerScenario(Scenario{Order: 15, Name: gatewayScenario, Run: runGatewayCreate})
}

func runGatewayCreate(env *Env, sys System) ([]result, error) {
	if sys.Name() != "sbx" {
		return nil, fmt.Errorf("%w: sbx only", errSkip)
	}
	if *gatewayURL == "" {
		return nil, fmt.Errorf("%w: no cluster (-gateway URL)", errSkip)
	}
	key, err := os.ReadFile(*gatewayTokenFile)
	if err != nil {
		return nil, fmt.Errorf("-gateway-token-file: %w", err)
	}
	gw := sdk.NewClient(*gatewayURL, strings.TrimSpace(string(key)))
	n := env.n(*createN, 3)
	return compareGatewayCreate(env.Client, gw, n), nil
}

// compareGatewayCreate times n create → first exec (`true`) runs on the
// single host and n through the gateway, interleaved so both see the same
// machine load; deletes are not timed.
func compareGatewayCreate(host, gateway *sdk.Client, n int) []result {
	var hostMs, gwMs []float64
	for i := 0; i < n; i++ {
		for _, c := range []struct {
			client *sdk.Client
			into   *[]float64
		}{{host, &hostMs}, {gateway, &gwMs}} {
			ms, err := createFirstExec(c.client)
			if err != nil {
				sysName := "sbx (one host)"
				if c.client == gateway {
					sysName = "sbx gateway (cluster)"
				}
				return []result{failed(gatewayScenario, sysName, err)}
			}
			*c.into = append(*c.into, ms)
		}
	}
	return []result{
		summarize(gatewayScenario, "sbx (one host)", "ms", hostMs),
		summarize(gatewayScenario, "sbx gateway (cluster)", "ms", gwMs),
	}
}

func createFirstExec(c *sdk.Client) (float64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	sb, err := c.CreateSandbox(ctx, sdk.CreateSandboxRequest{})
	if err != nil {
		return 0, err
	}
	res, err := c.Exec(ctx, sb.ID, sdk.ExecRequest{Cmd: []string{"true"}})
	elapsed := time.Since(start)
	if derr := c.DeleteSandbox(ctx, sb.ID, true); err == nil {
		err = derr
	}
	if err == nil && res.ExitCode != 0 {
		err = fmt.Errorf("true: exit %d", res.ExitCode)
	}
	return float64(elapsed.Microseconds()) / 1000, err
}
