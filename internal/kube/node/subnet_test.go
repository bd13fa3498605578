package node

import "testing"

func TestSubnetFor(t *testing.T) {
	for _, tc := range []struct{ pool, ip, want string }{
		{"10.64.0.0/10", "192.168.1.5", "10.65.5.0/24"},    // low 14 bits of the IP: 1.5 -> 0x105
		{"10.64.0.0/10", "192.168.1.6", "10.65.6.0/24"},    // the next machine, the next /24
		{"10.64.0.0/10", "192.168.65.5", "10.65.5.0/24"},   // 64.0.0 apart: the same bits, the same subnet
		{"10.200.0.0/16", "172.16.3.77", "10.200.77.0/24"}, // 8 bits: the last octet
		{"10.200.7.0/24", "172.16.3.77", "10.200.7.0/24"},  // a pool of one
	} {
		got, err := SubnetFor(tc.pool, tc.ip)
		if err != nil || got != tc.want {
			t.Errorf("SubnetFor(%s, %s) = %s %v, want %s", tc.pool, tc.ip, got, err, tc.want)
		}
	}
	for _, tc := range [][2]string{{"10.0.0.0/25", "10.1.1.1"}, {"fd00::/64", "10.1.1.1"}, {"10.0.0.0/16", "fd00::1"}, {"nope", "10.1.1.1"}} {
		if got, err := SubnetFor(tc[0], tc[1]); err == nil {
			t.Errorf("SubnetFor(%s, %s) = %s, want an error", tc[0], tc[1], got)
		}
	}
}
