package network

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"

	"github.com/vishvananda/netlink"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// ensureBridge makes the bridge exist, up, with the gateway address, and
// turns on IPv4 forwarding (needed for NAT egress). It refuses a subnet that
// overlaps a route of another interface: sandboxes would shadow, or be
// shadowed by, a network the host already reaches.
func ensureBridge(name string, gw netip.Prefix) (netlink.Link, error) {
	if err := checkSubnetFree(name, gw.Masked()); err != nil {
		return nil, err
	}
	link, err := netlink.LinkByName(name)
	var notFound netlink.LinkNotFoundError
	switch {
	case errors.As(err, &notFound):
		br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: name}}
		if err := netlink.LinkAdd(br); err != nil {
			return nil, errdefs.Internal(err, "create bridge %s", name)
		}
		if link, err = netlink.LinkByName(name); err != nil {
			return nil, errdefs.Internal(err, "find bridge %s", name)
		}
	case err != nil:
		return nil, errdefs.Internal(err, "find bridge %s", name)
	case link.Type() != "bridge":
		return nil, errdefs.Conflict(wire.CodeBridgeConflict, "network interface %s exists and is not a bridge; pick another --bridge", name)
	}
	// No IPv6 on the bridge: sandboxes are IPv4 only, and a link-local
	// address would let them talk to the host over IPv6.
	writeSysctl("net/ipv6/conf/"+name+"/disable_ipv6", "1")
	addrs, err := netlink.AddrList(link, netlink.FAMILY_V4)
	if err != nil {
		return nil, errdefs.Internal(err, "list addresses of %s", name)
	}
	have := false
	for _, a := range addrs {
		if a.IPNet.String() == gw.String() {
			have = true
			continue
		}
		// An address from an earlier --subnet.
		if err := netlink.AddrDel(link, &a); err != nil {
			return nil, errdefs.Internal(err, "remove old address %s of %s", a.IPNet, name)
		}
	}
	if !have {
		addr := &netlink.Addr{IPNet: &net.IPNet{IP: gw.Addr().AsSlice(), Mask: net.CIDRMask(gw.Bits(), 32)}}
		if err := netlink.AddrAdd(link, addr); err != nil {
			return nil, errdefs.Internal(err, "give %s the address %s", name, gw)
		}
	}
	if err := netlink.LinkSetUp(link); err != nil {
		return nil, errdefs.Internal(err, "bring up %s", name)
	}
	if err := writeSysctl("net/ipv4/ip_forward", "1"); err != nil {
		return nil, errdefs.Internal(err, "enable IPv4 forwarding")
	}
	return link, nil
}

// checkSubnetFree fails if a route of an interface other than the bridge
// overlaps subnet.
func checkSubnetFree(bridge string, subnet netip.Prefix) error {
	routes, err := netlink.RouteList(nil, netlink.FAMILY_V4)
	if err != nil {
		return errdefs.Internal(err, "list routes")
	}
	for _, r := range routes {
		if r.Dst == nil {
			continue // the default route overlaps everything
		}
		dst, ok := prefixOf(r.Dst)
		if !ok || dst.Bits() == 0 || !dst.Overlaps(subnet) {
			continue
		}
		link, err := netlink.LinkByIndex(r.LinkIndex)
		if err == nil && link.Attrs().Name == bridge {
			continue
		}
		dev := fmt.Sprint(r.LinkIndex)
		if err == nil {
			dev = link.Attrs().Name
		}
		return errdefs.Conflict(wire.CodeSubnetConflict, "sandbox subnet %s overlaps the route to %s on %s; pick another --subnet", subnet, dst, dev)
	}
	return nil
}

func prefixOf(n *net.IPNet) (netip.Prefix, bool) {
	a, ok := netip.AddrFromSlice(n.IP)
	if !ok {
		return netip.Prefix{}, false
	}
	ones, _ := n.Mask.Size()
	return netip.PrefixFrom(a.Unmap(), ones), true
}

// removeBridge deletes the bridge, if any. Its ports (veths) stay.
func removeBridge(name string) error {
	link, err := netlink.LinkByName(name)
	var notFound netlink.LinkNotFoundError
	if errors.As(err, &notFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return netlink.LinkDel(link)
}

// writeSysctl sets a sysctl of the calling thread's network namespace.
func writeSysctl(name, value string) error {
	return os.WriteFile("/proc/sys/"+name, []byte(value), 0o644)
}
