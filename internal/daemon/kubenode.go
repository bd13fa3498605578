package daemon

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/sbxhq/sbx/internal/errdefs"
	kubenode "github.com/sbxhq/sbx/internal/kube/node"
	"github.com/sbxhq/sbx/internal/network"
	"github.com/sbxhq/sbx/internal/sandbox"
	"github.com/sbxhq/sbx/internal/store"
)

// startKubeNode makes this host a Kubernetes node (sbx serve --kube-node;
// package internal/kube/node) next to the API server. A node that cannot
// join ends the daemon with errc: a host the cluster cannot place
// sandboxes on should not look healthy.
func startKubeNode(ctx context.Context, cfg kubenode.Config, mgr *sandbox.Manager, nw *network.Manager, teams store.TeamStore, errc chan<- error) {
	if !cfg.Enabled {
		return
	}
	cfg.EnsureTeam = func(ctx context.Context, team string) error {
		if _, err := teams.GetTeam(ctx, team); errdefs.KindOf(err) != errdefs.KindNotFound {
			return err
		}
		err := teams.CreateTeam(ctx, &store.Team{ID: team}) // no quota: the gateway keeps them
		if errdefs.KindOf(err) == errdefs.KindConflict {
			return nil // made meanwhile
		}
		return err
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
