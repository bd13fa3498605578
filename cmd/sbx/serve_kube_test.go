package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/sbxhq/sbx/internal/daemon"
)

// serveKubeConfig is the daemon config sbx serve makes of the network and
// kube node flags.
func serveKubeConfig(t *testing.T, args ...string) (*daemon.Config, error) {
	t.Helper()
	var nf netFlags
	var kf kubeNodeFlags
	cmd := &cobra.Command{Use: "serve"}
	nf.register(cmd)
	kf.register(cmd)
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	cfg := &daemon.Config{Listen: "127.0.0.1:7423"}
	cfg.BlobS3.URL = "s3://bucket/cluster"
	if err := nf.apply(cmd, cfg); err != nil {
		return nil, err
	}
	return cfg, kf.apply(cmd, cfg)
}

// Each host derives its own sandbox subnet from the pool and its node
// address, so pod IPs differ between hosts with one DaemonSet spec.
func TestKubeNodeSubnetPool(t *testing.T) {
	for ip, want := range map[string]string{"192.168.1.5": "10.65.5.0/24", "192.168.1.6": "10.65.6.0/24"} {
		cfg, err := serveKubeConfig(t, "--kube-node", "--kube-advertise-url", "http://"+ip+":7423", "--kube-node-subnet-pool", "10.64.0.0/10")
		if err != nil || cfg.Subnet != want {
			t.Errorf("host %s: subnet %v %v, want %s", ip, cfg, err, want)
		}
	}
	cfg, err := serveKubeConfig(t, "--kube-node", "--kube-node-address", "10.0.0.9", "--kube-node-subnet-pool", "10.200.0.0/16")
	if err != nil || cfg.Subnet != "10.200.9.0/24" {
		t.Errorf("--kube-node-address 10.0.0.9: %v %v, want 10.200.9.0/24", cfg, err)
	}
	if _, err := serveKubeConfig(t, "--kube-node", "--subnet", "10.9.0.0/24", "--kube-node-subnet-pool", "10.64.0.0/10"); err == nil || !strings.Contains(err.Error(), "give one") {
		t.Errorf("--subnet with a pool: %v, want refused", err)
	}
	if _, err := serveKubeConfig(t, "--kube-node", "--kube-node-subnet-pool", "10.64.0.0/28"); err == nil || !strings.Contains(err.Error(), "--kube-node-subnet-pool") {
		t.Errorf("a pool smaller than a /24: %v, want refused", err)
	}
}
