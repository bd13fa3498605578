package node

import (
	"fmt"
	"net/netip"
)

// HostSubnetBits is the size of the sandbox subnet each host derives from
// a pool (SubnetFor): a /24, 253 sandboxes, above the default --kube-node-pods.
const HostSubnetBits = 24

// SubnetFor is a host's own sandbox subnet (a /24) in pool, chosen by the
// low bits of the machine's IP: pod IPs are unique across hosts without any
// coordination, as long as no two machines' IPs agree in those bits (pool
// 10.64.0.0/10 leaves 14 bits: any machines of one /18 network).
func SubnetFor(pool, machineIP string) (string, error) {
	p, err := netip.ParsePrefix(pool)
	if err != nil || !p.Addr().Is4() {
		return "", fmt.Errorf("subnet pool %q: want an IPv4 CIDR such as 10.64.0.0/10", pool)
	}
	if p.Bits() > HostSubnetBits {
		return "", fmt.Errorf("subnet pool %q is smaller than one host's /%d", pool, HostSubnetBits)
	}
	ip, err := netip.ParseAddr(machineIP)
	if err != nil || !ip.Is4() {
		return "", fmt.Errorf("machine address %q: want an IPv4 address to derive the host's subnet from", machineIP)
	}
	p = p.Masked()
	slots := uint32(1) << (HostSubnetBits - p.Bits())
	m, base := ip.As4(), p.Addr().As4()
	index := (uint32(m[0])<<24 | uint32(m[1])<<16 | uint32(m[2])<<8 | uint32(m[3])) % slots
	b := uint32(base[0])<<24 | uint32(base[1])<<16 | uint32(base[2])<<8 | uint32(base[3])
	b += index << (32 - HostSubnetBits)
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{byte(b >> 24), byte(b >> 16), byte(b >> 8), byte(b)}), HostSubnetBits).String(), nil
}
