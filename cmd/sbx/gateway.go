package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/authz"
	"github.com/sbxhq/sbx/internal/daemon"
	"github.com/sbxhq/sbx/internal/gateway"
	"github.com/sbxhq/sbx/internal/mtls"
)

func newGatewayCmd() *cobra.Command {
	var kubeconfig, namespace, listen, tokenFile, hostTokenFile, tlsCert, tlsKey string
	var hostCA, hostCert, hostKey, hostName string
	var keysFile, auditLog string
	var rateLimit float64
	var rateBurst int
	var readyTimeout, outOfServiceAfter time.Duration
	var e2bf e2bFlags // serve_e2b.go
	cmd := &cobra.Command{
		Use:   "gateway --admin-token-file FILE [--kubeconfig FILE] [--kube-namespace NS] [--listen ADDR]",
		Short: "Serve the sbx API for a Kubernetes cluster of sbx hosts",
		Long: `Serve sbx's own HTTP API (/v1, the same as one host's) for a whole Kubernetes
cluster whose sbx hosts run "sbx serve --kube-node" (see docs/kubernetes/index.md;
deploying: docs/kubernetes/deploy.md).

The gateway is stateless: run as many replicas as you like behind one Service.
Each keeps watch caches of the namespace's agent-sandbox Sandbox objects, its
Pods and the Nodes; the Kubernetes API is the only state they share.

  create, list, get, stop, start, delete   become Sandbox objects
                                           (agents.x-k8s.io/v1beta1): create
                                           makes one and answers once its pod
                                           runs and answers; stop (and pause)
                                           sets operatingMode Suspended (the
                                           host archives the sandbox to S3);
                                           start (and resume of a suspended
                                           one) sets Running (kube-scheduler places
                                           it, maybe on another host); delete
                                           deletes it. get merges the object
                                           with the host's live record; list
                                           reads the state each host reports in
                                           its pod's status (no host is asked).
  everything else under /v1/sandboxes/ID   is reverse-proxied to the host that
                                           runs the sandbox (the node's
                                           sbx.dev/api annotation): exec and its
                                           streams, files, processes, terminals
                                           (WebSocket), previews. A call that
                                           needs a running sandbox starts a
                                           stopped one first.

Callers authenticate with the gateway's admin key (--admin-token-file) or a
team's key of --keys-file (sbx gateway key create; docs/kubernetes/teams.md):
a team's key sees only its team's sandboxes, maxSandboxes holds over the
cluster, writes are audited (--audit-log). The gateway calls the hosts over
mutual TLS with --host-ca, --host-client-cert and --host-client-key (the
hosts' sbx serve --tls-client-ca serves no other client;
docs/kubernetes/deploy.md "Mutual TLS"), sending each caller's own identity
(key id, team, scopes) in header Sbx-Principal, which a host believes only
from the gateway's certificate: the host checks the scope, scopes to the
team and audits the call as the caller's. Without mutual TLS it calls them
with the hosts' admin key (--host-token-file, by default the same file). Images, snapshots, volumes,
backups, and the hosts' own keys and teams are kept by each host and are
not served here (404 ROUTE_NOT_FOUND); nor is fork. Archive of a stopped
sandbox answers it stopped: its files are in the blob store already.

The Daytona and E2B layers are served at /daytona/ and /e2b/ as on a host:
their lifecycle calls are the gateway's own, each sandbox's calls (toolbox,
envd, code interpreter) go to its host (docs/compat/index.md "Through the
cluster gateway"); --e2b-template maps E2B's templates to images.

A host lost for good: an sbx node NotReady for --out-of-service-after gets
the taint node.kubernetes.io/out-of-service, so Kubernetes moves its pods to
other hosts, each sandbox restored from its newest checkpoint; the gateway
takes the taint off when the node is Ready again (docs/kubernetes/lifecycle.md).

Sandbox names must also be Kubernetes label values (end with a letter or a
digit): other names are refused with 400 INVALID_NAME.

Kubernetes credentials: --kubeconfig, else $KUBECONFIG, else the in-cluster
service account. The gateway needs get/list/watch on pods, get/list/watch/update
on nodes (the out-of-service taint), get/list/watch/create/patch/delete on
sandboxes.agents.x-k8s.io and get/list/watch/create/update on secrets (a
sandbox's env values and bucket keys are in a Secret its Sandbox owns, never
in the object) in
--kube-namespace (deploy/kubernetes/gateway.yaml).`,
		Example: `  sbx gateway --kubeconfig ~/.kube/config --admin-token-file /etc/sbx/admin.token
  SBX_HOST=http://127.0.0.1:7480 SBX_TOKEN=$(cat /etc/sbx/admin.token) sbx create box`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if tokenFile == "" {
				return usagef("--admin-token-file is required: the key callers of the gateway present")
			}
			if (tlsCert == "") != (tlsKey == "") {
				return usagef("--tls-cert and --tls-key go together: give both or neither")
			}
			if rateLimit < 0 || rateBurst < 0 {
				return usagef("--rate-limit and --rate-burst must be 0 or more")
			}
			token, err := readKeyFile(tokenFile)
			if err != nil {
				return err
			}
			hostToken := token
			if hostTokenFile != "" {
				if hostToken, err = readKeyFile(hostTokenFile); err != nil {
					return err
				}
			}
			kube, agents, err := kubeClients(kubeconfig, "sbx-gateway") // gateway_drain.go
			if err != nil {
				return err
			}
			ctx := cmd.Context() // ends on SIGINT or SIGTERM (main.go)
			cluster := gateway.NewCluster(kube, agents, namespace)
			if err := cluster.Start(ctx, 2*time.Minute); err != nil { // the informers run until ctx ends
				return err
			}
			if outOfServiceAfter > 0 {
				go gateway.RunOutOfService(ctx, kube, outOfServiceAfter, slog.Default())
			}
			transport, err := hostTransport(hostCA, hostCert, hostKey, hostName)
			if err != nil {
				return err
			}
			tenants, err := gateway.NewTenants(ctx, auth.AdminToken(token), keysFile)
			if err != nil {
				return err
			}
			if keysFile != "" {
				go tenants.Watch(ctx, 10*time.Second) // a Secret volume changes in place
			}
			audit, err := auditWriter(auditLog)
			if err != nil {
				return err
			}
			gate := &authz.Gate{Keys: tenants, Limits: auth.NewRateLimits(rateLimit, rateBurst), Audit: authz.NewAuditLog(gateway.NewAuditLines(audit), 0)}
			defer gate.Audit.Close()
			var e2bCfg daemon.Config
			if err := e2bf.apply(cmd, &e2bCfg); err != nil {
				return err
			}
			gw := gateway.New(gateway.Config{Cluster: cluster, Gate: gate, Quota: tenants.Quota, HostToken: hostToken, Transport: transport, ReadyTimeout: readyTimeout,
				E2BTemplates: e2bCfg.E2BTemplates, TokenSecret: []byte(token),
				ForwardIdentity: hostCA != ""}) // over mutual TLS the hosts take each caller's own identity
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return err
			}
			srv := &http.Server{Handler: gw, ReadHeaderTimeout: 30 * time.Second}
			go func() {
				<-ctx.Done()
				shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				srv.Shutdown(shutdown)
			}()
			slog.Info("sbx gateway serving", "listen", ln.Addr().String(), "namespace", namespace)
			if tlsCert != "" {
				err = srv.ServeTLS(ln, tlsCert, tlsKey)
			} else {
				err = srv.Serve(ln)
			}
			if errors.Is(err, http.ErrServerClosed) {
				return nil
			}
			return err
		},
	}
	cmd.AddCommand(newGatewayKeyCmd(), newGatewayDrainCmd()) // gateway_key.go, gateway_drain.go
	e2bf.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file of the cluster (default $KUBECONFIG, else the in-cluster service account)")
	fl.StringVar(&namespace, "kube-namespace", "sbx", "namespace of the Sandbox objects and their pods")
	fl.StringVar(&listen, "listen", "127.0.0.1:7480", "address to serve the API on")
	fl.StringVar(&tokenFile, "admin-token-file", "", "file holding the admin key callers present (required)")
	fl.StringVar(&hostTokenFile, "host-token-file", "", "file holding the sbx hosts' admin key, the cluster's shared secret (default: --admin-token-file)")
	fl.DurationVar(&readyTimeout, "ready-timeout", 5*time.Minute, "how long create, start and a call on a stopped sandbox wait for it to run")
	fl.DurationVar(&outOfServiceAfter, "out-of-service-after", 2*time.Minute, "taint an sbx node out-of-service once it has been NotReady this long, so its sandboxes move to other hosts; longer than a host's own freeze after losing its lease (40s); 0: never (an operator taints by hand)")
	fl.StringVar(&tlsCert, "tls-cert", "", "PEM certificate (chain) to serve over https; needs --tls-key")
	fl.StringVar(&tlsKey, "tls-key", "", "PEM private key of --tls-cert")
	fl.StringVar(&keysFile, "keys-file", "", "teams' API keys and quotas (YAML; Secret sbx-gateway-keys), reloaded when it changes; see docs/kubernetes/teams.md and sbx gateway key create")
	fl.StringVar(&auditLog, "audit-log", "-", "where every write is audited, one JSON line each: a file, or - for standard output")
	fl.Float64Var(&rateLimit, "rate-limit", 100, "requests a second each API key may send on average to this replica (the admin key is exempt); 0 turns limits off")
	fl.IntVar(&rateBurst, "rate-burst", 200, "requests an API key may send at once above --rate-limit")
	fl.StringVar(&hostCA, "host-ca", "", "PEM CA that signed the hosts' API certificates (mutual TLS with the hosts: docs/kubernetes/deploy.md); needs --host-client-cert and --host-client-key")
	fl.StringVar(&hostCert, "host-client-cert", "", "PEM certificate the gateway presents to the hosts (their --tls-client-ca signed it; named as their --tls-client-name)")
	fl.StringVar(&hostKey, "host-client-key", "", "PEM private key of --host-client-cert")
	fl.StringVar(&hostName, "host-server-name", "sbx-host", "name the hosts' API certificates carry (a DNS SAN), checked whatever address a host advertises")
	return cmd
}

func readKeyFile(file string) (string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("read the key: %w", err)
	}
	t := strings.TrimSpace(string(b))
	if t == "" {
		return "", fmt.Errorf("the key file %s is empty", file)
	}
	return t, nil
}

// hostTransport reaches the hosts: with --host-ca, over mutual TLS (the
// hosts serve only the gateway's certificate); without, as the hosts'
// sbx.dev/api annotation says.
func hostTransport(ca, cert, key, serverName string) (http.RoundTripper, error) {
	if ca == "" && cert == "" && key == "" {
		return nil, nil
	}
	if ca == "" || cert == "" || key == "" {
		return nil, usagef("--host-ca, --host-client-cert and --host-client-key go together: give all three or none")
	}
	tc, err := mtls.Client(ca, cert, key, serverName)
	if err != nil {
		return nil, err
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = tc
	return t, nil
}

// auditWriter is where the audit lines go: standard output for "-".
func auditWriter(path string) (io.Writer, error) {
	if path == "-" {
		return os.Stdout, nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("--audit-log: %w", err)
	}
	return f, nil
}
