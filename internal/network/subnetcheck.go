package network

import "net/netip"

// CheckSubnetFree fails, with the route and interface it collides with, if
// a host route of an interface other than bridge overlaps subnet: the check
// the daemon makes at start, for sbx doctor to make before it.
func CheckSubnetFree(bridge string, subnet netip.Prefix) error {
	return checkSubnetFree(bridge, subnet.Masked())
}
