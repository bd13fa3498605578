// Package daemon wires the store, image manager, runtime, sandbox Manager and
// HTTP API into `sbx serve`.
package daemon

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/sbxhq/sbx/internal/netfloor"
	"github.com/sbxhq/sbx/internal/secret"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/sbxhq/sbx/internal/api"
	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/backup"
	"github.com/sbxhq/sbx/internal/blob/s3"
	"github.com/sbxhq/sbx/internal/build"
	"github.com/sbxhq/sbx/internal/compat/e2b"
	"github.com/sbxhq/sbx/internal/diskspace"
	"github.com/sbxhq/sbx/internal/image"
	kubenode "github.com/sbxhq/sbx/internal/kube/node"
	"github.com/sbxhq/sbx/internal/network"
	"github.com/sbxhq/sbx/internal/runtime"
	"github.com/sbxhq/sbx/internal/sandbox"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/internal/volume"
)

// Config is the daemon's configuration.
type Config struct {
	DataDir string // default /var/lib/sbx
	Listen  string // default 127.0.0.1:7423

	// Lifecycle: archives go to BlobDir (default <DataDir>/blobs); every
	// event is POSTed to each of Webhooks, signed with WebhookSecret.
	BlobDir       string
	Webhooks      []string
	WebhookSecret string
	// BlobS3, when its URL is set, keeps archives in S3 instead of BlobDir.
	BlobS3 s3.Config

	// Networking (see package network). NoNetwork turns it off: every
	// sandbox then has loopback only.
	NoNetwork     bool
	Bridge        string   // default network.DefaultBridge
	Subnet        string   // default network.DefaultSubnet
	DNSUpstreams  []string // default: the host's resolvers
	ConnLimit     int      // tracked connections per sandbox; 0 default, <0 none
	PreviewDomain string   // wildcard domain of host-based previews; "" for none
	// Floor is what nothing may reach on a tenant's behalf (package
	// netfloor): sandboxes, the egress proxy, handlers, webhooks, buckets.
	Floor netfloor.Config
	// PreviewNotActivity stops preview requests from counting as activity.
	PreviewNotActivity bool
	// NoDaytona turns off Daytona's API at /daytona/ (daytona.go).
	NoDaytona bool
	// HTTP: the API server's timeouts and connection caps (httpserver.go).
	HTTP HTTPLimits

	// AgentBinary is what instances run as PID 1 (agent.go; default:
	// sbx-agent next to this executable, else this executable).
	AgentBinary string

	// Class gvisor: the runsc binary (default: runsc on PATH) and gVisor
	// platform (default ptrace).
	Runsc         string
	RunscPlatform string

	// TLSCert and TLSKey, PEM files, serve the API and previews over
	// https (tls.go); both or neither.
	TLSCert, TLSKey string
	// TLSClientCA, with TLSCert, serves only clients whose certificate it
	// signed and that name one of TLSClientNames (a host in a cluster: the
	// gateway; tls.go).
	TLSClientCA    string
	TLSClientNames []string

	// DiskReserveMiB is the free space the data dir's disk keeps: below it
	// creates, starts and image imports are refused (507). 0: no reserve.
	DiskReserveMiB int
	// DefaultDiskMiB is the disk of a sandbox whose create names none
	// (sandbox/disk.go); 0: its writes go to the data dir unbounded.
	DefaultDiskMiB int

	Metrics MetricsConfig // metrics.go

	// E2BTemplates maps E2B template names to sbx images (internal/compat/e2b).
	E2BTemplates map[string]string

	// CreateOnTouch: a toolbox call on an unknown name creates the
	// sandbox with the defaults (see package api, touch.go).
	CreateOnTouch bool

	Teams           TeamsConfig     // teams.go: API keys, rate limits, audit log
	SandboxDefaults SandboxDefaults // the operator's sandbox defaults (config.go)
	// SSHListen is the SSH gateway's address (ssh.go); "" for none.
	SSHListen  string
	EgressHTTP EgressHTTPConfig // the HTTP egress proxy (egresshttp.go)
	// NoUI turns off the dashboard at /ui; UISampleEvery is its stats
	// history's resolution, default 10 s (ui.go).
	NoUI          bool
	UISampleEvery time.Duration
	KubeNode      kubenode.Config // kubenode.go: join a Kubernetes cluster as a node
}

// Run serves until ctx is cancelled. Instances keep running after it returns.
func Run(ctx context.Context, cfg Config) error {
	if cfg.DataDir == "" {
		cfg.DataDir = "/var/lib/sbx"
	}
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:7423"
	}
	if os.Geteuid() != 0 {
		return errors.New("sbx serve must run as root: it mounts filesystems and runs containers")
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("create data dir: %w", err)
	}
	release, err := lockDataDir(cfg.DataDir)
	if err != nil {
		return err
	}
	defer release()
	token, err := adminToken(filepath.Join(cfg.DataDir, "admin.token"))
	if err != nil {
		return err
	}

	disk := diskspace.New(cfg.DataDir, uint64(cfg.DiskReserveMiB)<<20)
	sealer, err := secret.NewSealer(cfg.DataDir) // bucket keys are sealed at rest
	if err != nil {
		return err
	}
	st, err := store.OpenSQLite(filepath.Join(cfg.DataDir, StoreFile), store.WithDiskGuard(disk), store.WithSealer(sealer))
	if err != nil {
		return fmt.Errorf("open store: %w", err)
	}
	defer st.Close()
	images, err := image.New(cfg.DataDir, st)
	if err != nil {
		return err
	}
	if err := image.CleanStaleStages(); err != nil {
		slog.Warn("clean up the staging mounts of a daemon that died", "err", err)
	}
	images.GuardDisk(disk)
	// The daemon's own start-up work sees every team's records.
	sys := auth.System(ctx, "daemon startup")
	if err := images.EnsureBase(sys); err != nil {
		return fmt.Errorf("create the base image: %w", err)
	}
	rt, err := runtime.NewRunc(filepath.Join(cfg.DataDir, "runc"))
	if err != nil {
		return err
	}
	agentBin, err := installAgent(cfg) // agent.go: sbx-agent, else this binary
	if err != nil {
		return err
	}
	defaults, err := sandboxDefaults(cfg.DataDir, cfg.SandboxDefaults) // config.go
	if err != nil {
		return err
	}
	defaults.DiskMiB = defaultDisk(cfg.DefaultDiskMiB) // config.go
	netfloor.SetDefault(netfloor.New(cfg.Floor))
	nw, netw, err := startNetwork(ctx, cfg, st)
	if err != nil {
		return err
	}
	if nw != nil {
		defer nw.Close()
	}
	egress, err := startEgressHTTP(cfg, st, nw, &defaults) // egresshttp.go
	if err != nil {
		return err
	}
	defer egress.Close()
	life, err := startLifecycle(cfg) // lifecycle.go
	if err != nil {
		return err
	}
	defer life.Close()
	mx := newMetrics(cfg, st, life.hooks) // metrics.go
	egress.registerMetrics(mx.metrics)
	vols, err := volume.New(cfg.DataDir) // named volumes, mounted again after a reboot
	if err != nil {
		return err
	}
	// teamhooks.go: each team's events to its webhook.
	teamHooks, err := newTeamHooks(ctx, st)
	if err != nil {
		return err
	}
	defer teamHooks.Close()
	life.onEvent = teamHooks.wrap(life.onEvent)
	runtimes := classRuntimes(cfg, rt, agentBin) // gvisor.go
	defer closeRuntimes(runtimes)
	mgr, err := sandbox.New(sandbox.Config{
		DataDir: cfg.DataDir, AgentBinary: agentBin,
		Store: st, Images: images, Rootfs: rootfs{},
		Runtimes: runtimes,
		Blobs:    life.blobs,
		OnEvent:  life.onEvent,
		Network:  netw,
		Disk:     disk,
		Observer: mx.metrics,
		Defaults: defaults,
		Volumes:  vols,
	})
	if err != nil {
		return err
	}
	defer mgr.Close()
	if err := mgr.Reconcile(sys); err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	// Agents of an older sbx: talk to them or restart; sweep unused agent binaries.
	mgr.SettleAgents(sys)
	mgr.StartSnapshotSweeper(time.Second)       // expired snapshots; clears interrupted work
	if err := mgr.StartPools(sys); err != nil { // warm pools: keep what survived, refill
		return fmt.Errorf("start pools: %w", err)
	}
	if err := settleNetwork(sys, nw, st); err != nil {
		slog.Error("settle sandbox networks", "err", err)
	}
	previews, err := network.NewPreviews(st, cfg.DataDir, cfg.PreviewDomain)
	if err != nil {
		return err
	}

	raiseFileLimit()
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Listen, err)
	}
	ln = limitConns(ln, cfg.HTTP)
	if ln, err = withTLS(ln, cfg); err != nil { // tls.go
		return err
	}
	keySvc, tenancy, err := startTeams(ctx, cfg.Teams, st, auth.AdminToken(token), teamHooks) // teams.go
	if err != nil {
		return err
	}
	defer tenancy.Gate.Audit.Close()
	defer keySvc.Close()
	previews.SetKeys(keySvc) // a port's token dies with the key that exposed it
	handler := api.New(mgr, images, keySvc)
	handler.SetTenancy(tenancy)
	if cfg.TLSClientCA != "" {
		handler.SetForwarders(cfg.TLSClientNames) // the gateway: it says whose request it forwards
	}
	handler.SetMetrics(mx.api())
	if err := mx.serve(ctx); err != nil {
		return err
	}
	handler.SetNetworking(api.Networking{Network: nw, Previews: previews, PreviewActivity: !cfg.PreviewNotActivity})
	handler.SetEgressHTTP(egress.api())
	handler.SetCreateOnTouch(cfg.CreateOnTouch)
	// Every surface goes through the one gate (internal/authz); each
	// declares what its operations need.
	gate := tenancy.Gate
	e2bCfg := e2b.Config{Templates: cfg.E2BTemplates, TokenSecret: []byte(token), Domain: previews.Domain(), Usage: mx.usage, Ports: previews, Volumes: vols}
	if egress != nil {
		e2bCfg.Secrets = egress.secrets
	}
	e2b.New(mgr, gate, e2bCfg).Attach(handler)
	handler.SetBuilder(build.New(mgr, images, filepath.Join(cfg.DataDir, "tmp", "build"))) // image builds
	hist := statsHistory(ctx, cfg, mgr)                                                    // ui.go: the dashboard's charts and Daytona's getMetrics
	mountDaytona(cfg, handler, mgr, images, previews, gate, hist, keySvc, token)           // daytona.go
	mountUI(cfg, handler, mgr, gate, life.hooks, hist)                                     // ui.go: the dashboard
	mountMCP(handler, gate)                                                                // mcp.go: MCP at /mcp
	if err := startSSH(ctx, cfg, st, mgr, handler, gate, keySvc); err != nil {             // ssh.go
		return err
	}
	backups, err := backup.New(cfg.DataDir, life.blobs)
	if err != nil {
		return err
	}
	countDisk(st, vols, backups)                                                                                 // diskquota.go
	backups.StartSweeper(ctx, 5*time.Second)                                                                     // expired backups
	handler.SetPools(mgr)                                                                                        // warm pools
	mx.metrics.ObservePools(mgr.PoolStats)                                                                       // sbx_pool_ready
	handler.SetStorage(api.Storage{Volumes: vols, VolumeUsers: mgr.VolumeUsers, Backups: backups, Buckets: mgr}) // volumes, backups
	srv := newHTTPServer(handler, cfg.HTTP)
	slog.Info("sbx serving", "listen", ln.Addr().String(), "tls", cfg.TLSCert != "", "dataDir", cfg.DataDir)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	startKubeNode(ctx, cfg.KubeNode, mgr, nw, st, errc) // kubenode.go
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	slog.Info("sbx shutting down: no new requests; sandboxes keep running")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		slog.Warn("requests still open at shutdown were cut", "err", err)
	}
	slog.Info("sbx stopped")
	return nil
}

// rootfs adapts the image package's mount functions to sandbox.Rootfs.
type rootfs struct{}

func (rootfs) Mount(layers []string, upper, work, target string) error {
	return image.MountRootfs(layers, upper, work, target)
}
func (rootfs) Unmount(target string) error { return image.Unmount(target) }

// lockDataDir makes sure only one daemon uses a data dir. The lock dies with
// the process, so a killed daemon never blocks its successor.
func lockDataDir(dir string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(dir, "daemon.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("another sbx daemon is using %s; stop it or pick another --data-dir", dir)
	}
	return func() { f.Close() }, nil
}

// adminToken reads the admin API key, creating it on first start.
func adminToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b)), nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	raw := make([]byte, 32)
	rand.Read(raw)
	token := "sbx_" + hex.EncodeToString(raw)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(token+"\n"), 0o600); err != nil {
		return "", err
	}
	return token, os.Rename(tmp, path)
}
