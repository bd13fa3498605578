package daemon

import (
	"context"
	"errors"
	"fmt"

	"github.com/sbxhq/sbx/internal/netfloor"
	"github.com/sbxhq/sbx/internal/network"
	"github.com/sbxhq/sbx/internal/sandbox"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// startNetwork sets up bridge networking unless cfg turns it off. The
// second result is the same manager as a sandbox.Network, nil when off (a
// nil *network.Manager in an interface would not be nil).
func startNetwork(ctx context.Context, cfg Config, st *store.SQLite) (*network.Manager, sandbox.Network, error) {
	if cfg.NoNetwork {
		return nil, nil, nil
	}
	nw, err := network.New(ctx, network.Config{
		DataDir: cfg.DataDir, Bridge: cfg.Bridge, Subnet: cfg.Subnet,
		DNSUpstreams: cfg.DNSUpstreams, ConnLimit: cfg.ConnLimit, Store: st,
		HTTPProxyPort: egressProxyPort(cfg), // egresshttp.go
		Floor:         netfloor.Default(),
	})
	if err != nil {
		return nil, nil, fmt.Errorf("set up sandbox networking (or run with --network none): %w", err)
	}
	return nw, nw, nil
}

// settleNetwork runs once Reconcile has settled which instances run: the
// network of every live bridge sandbox is restored if Reconcile did not
// already, and network state of any other sandbox is removed.
func settleNetwork(ctx context.Context, nw *network.Manager, st store.Store) error {
	if nw == nil {
		return nil
	}
	all, err := st.ListSandboxes(ctx, store.Filter{})
	if err != nil {
		return err
	}
	keep := map[string]bool{}
	var errs []error
	for _, sb := range all {
		if !sandbox.HasInstance(sb.State) || sb.Spec.Network != wire.NetworkBridge {
			continue
		}
		keep[sb.ID] = true
		if _, ok := nw.Address(sb.ID); !ok {
			if err := nw.Restore(ctx, sb); err != nil {
				errs = append(errs, fmt.Errorf("restore network of %s: %w", sb.ID, err))
			}
		}
	}
	return errors.Join(append(errs, nw.Prune(ctx, keep))...)
}
