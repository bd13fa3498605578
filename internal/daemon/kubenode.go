package daemon

import (
	"context"
	"fmt"
	"log/slog"

	kubenode "github.com/sbxhq/sbx/internal/kube/node"
	"github.com/sbxhq/sbx/internal/network"
	"github.com/sbxhq/sbx/internal/sandbox"
)

// startKubeNode makes this host a Kubernetes node (sbx serve --kube-node;
// package internal/kube/node) next to the API server. A node that cannot
// join ends the daemon with errc: a host the cluster cannot place
// sandboxes on should not look healthy.
func startKubeNode(ctx context.Context, cfg kubenode.Config, mgr *sandbox.Manager, nw *network.Manager, errc chan<- error) {
	if !cfg.Enabled {
		return
	}
	var addrs kubenode.Addresses
	if nw != nil {
		addrs = netAddresses{nw}
	}
	go func() {
		err := kubenode.Run(ctx, cfg, mgr, addrs, slog.Default())
		if ctx.Err() != nil {
			return
		}
		select {
		case errc <- fmt.Errorf("kube node: %w", err):
		default:
		}
	}()
}

// netAddresses gives the provider a sandbox's IP for its pod's status.
type netAddresses struct{ nw *network.Manager }

func (a netAddresses) AddressOf(id string) (string, bool) {
	ip, ok := a.nw.Address(id)
	if !ok {
		return "", false
	}
	return ip.String(), true
}
