package network

import (
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// attachVeth creates the sandbox's veth pair: the host end (vethName(id))
// becomes an isolated port of the bridge, so sandboxes cannot reach each
// other over it; the other end becomes eth0 in the namespace at nsPath, with
// addr, a default route via the gateway, and loopback up.
func attachVeth(id, nsPath string, bridge netlink.Link, addr netip.Prefix, gw netip.Addr) error {
	ns, err := netns.GetFromPath(nsPath)
	if err != nil {
		return fmt.Errorf("open network namespace: %w", err)
	}
	defer ns.Close()
	host := vethName(id)
	veth := &netlink.Veth{
		LinkAttrs:     netlink.LinkAttrs{Name: host, MasterIndex: bridge.Attrs().Index, MTU: bridge.Attrs().MTU},
		PeerName:      "eth0",
		PeerNamespace: netlink.NsFd(int(ns)),
	}
	if err := netlink.LinkAdd(veth); err != nil {
		return fmt.Errorf("create veth %s: %w", host, err)
	}
	link, err := netlink.LinkByName(host)
	if err != nil {
		return fmt.Errorf("find veth %s: %w", host, err)
	}
	if err := netlink.LinkSetIsolated(link, true); err != nil {
		return fmt.Errorf("isolate bridge port %s: %w", host, err)
	}
	if err := netlink.LinkSetUp(link); err != nil {
		return fmt.Errorf("bring up %s: %w", host, err)
	}

	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		return fmt.Errorf("netlink in sandbox namespace: %w", err)
	}
	defer h.Close()
	lo, err := h.LinkByName("lo")
	if err != nil {
		return err
	}
	if err := h.LinkSetUp(lo); err != nil {
		return fmt.Errorf("bring up lo: %w", err)
	}
	eth, err := h.LinkByName("eth0")
	if err != nil {
		return err
	}
	ipnet := &net.IPNet{IP: addr.Addr().AsSlice(), Mask: net.CIDRMask(addr.Bits(), 32)}
	if err := h.AddrAdd(eth, &netlink.Addr{IPNet: ipnet}); err != nil {
		return fmt.Errorf("give eth0 the address %s: %w", addr, err)
	}
	if err := h.LinkSetUp(eth); err != nil {
		return fmt.Errorf("bring up eth0: %w", err)
	}
	route := &netlink.Route{LinkIndex: eth.Attrs().Index, Gw: gw.AsSlice()}
	if err := h.RouteAdd(route); err != nil {
		return fmt.Errorf("add default route via %s: %w", gw, err)
	}
	// IPv4 only: no link-local IPv6 that would bypass the IPv4 rules.
	return inNetns(nsPath, func() error {
		return writeSysctl("net/ipv6/conf/all/disable_ipv6", "1")
	})
}

// reattachVeth makes an existing host end a port of the bridge again (the
// bridge may have been re-created while the sandbox ran).
func reattachVeth(id string, bridge netlink.Link) error {
	link, err := netlink.LinkByName(vethName(id))
	if err != nil {
		return fmt.Errorf("find veth of %s: %w", id, err)
	}
	if link.Attrs().MasterIndex != bridge.Attrs().Index {
		if err := netlink.LinkSetMaster(link, bridge); err != nil {
			return fmt.Errorf("attach %s to %s: %w", link.Attrs().Name, bridge.Attrs().Name, err)
		}
	}
	if err := netlink.LinkSetIsolated(link, true); err != nil {
		return err
	}
	return netlink.LinkSetUp(link)
}

// removeVeth deletes the sandbox's veth pair. Missing is not an error.
func removeVeth(id string) error {
	return removeLink(vethName(id))
}

func removeLink(name string) error {
	link, err := netlink.LinkByName(name)
	var notFound netlink.LinkNotFoundError
	if errors.As(err, &notFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := netlink.LinkDel(link); err != nil {
		return fmt.Errorf("delete %s: %w", name, err)
	}
	return nil
}

// bridgePorts lists the names of the sbx veths that are ports of the bridge.
// (Other daemons on the host have bridges of their own.)
func bridgePorts(bridge netlink.Link) ([]string, error) {
	links, err := netlink.LinkList()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, l := range links {
		name := l.Attrs().Name
		if l.Type() != "veth" || len(name) != len(vethPrefix)+12 || name[:len(vethPrefix)] != vethPrefix {
			continue
		}
		if l.Attrs().MasterIndex == bridge.Attrs().Index {
			out = append(out, name)
		}
	}
	return out, nil
}
