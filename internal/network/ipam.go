package network

import (
	"context"
	"net/netip"
	"sync"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// ipam hands out the addresses of the subnet. The store is the truth (a
// lease row per address, unique), so an address is never given twice, even
// across restarts; the mutex only saves this daemon from racing itself.
type ipam struct {
	mu     sync.Mutex
	store  store.NetworkStore
	subnet netip.Prefix
	gw     netip.Addr
}

func newIPAM(st store.NetworkStore, subnet netip.Prefix) *ipam {
	return &ipam{store: st, subnet: subnet, gw: subnet.Addr().Next()}
}

// acquire returns the sandbox's lease, taking the lowest free address if it
// holds none.
func (p *ipam) acquire(ctx context.Context, id string) (netip.Addr, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if l, err := p.store.GetLease(ctx, id); err == nil {
		if a, err := netip.ParseAddr(l.IP); err == nil && p.subnet.Contains(a) {
			return a, nil
		}
		// A lease from an earlier subnet: give it up.
		if err := p.store.DeleteLease(ctx, id); err != nil {
			return netip.Addr{}, err
		}
	} else if !errdefs.Is(err, errdefs.KindNotFound) {
		return netip.Addr{}, err
	}
	leases, err := p.store.ListLeases(ctx)
	if err != nil {
		return netip.Addr{}, err
	}
	taken := map[netip.Addr]bool{}
	for _, l := range leases {
		if a, err := netip.ParseAddr(l.IP); err == nil {
			taken[a] = true
		}
	}
	for a := p.gw.Next(); p.subnet.Contains(a) && !isBroadcast(a, p.subnet); a = a.Next() {
		if taken[a] {
			continue
		}
		err := p.store.CreateLease(ctx, &store.Lease{SandboxID: id, IP: a.String()})
		if err == nil {
			return a, nil
		}
		if !errdefs.Is(err, errdefs.KindConflict) {
			return netip.Addr{}, err
		}
	}
	return netip.Addr{}, errdefs.Unavailable(wire.CodeNetworkFull, "every address of the sandbox subnet %s is in use; stop a sandbox or start the daemon with a larger --subnet", p.subnet)
}

// release frees the sandbox's lease, if any.
func (p *ipam) release(ctx context.Context, id string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.store.DeleteLease(ctx, id)
}

// isBroadcast reports whether a is the last address of subnet.
func isBroadcast(a netip.Addr, subnet netip.Prefix) bool {
	return !subnet.Contains(a.Next())
}
