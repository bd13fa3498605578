package image

import (
	"context"
	"net/netip"
	"strings"
	"testing"

	"github.com/sbxhq/sbx/internal/netfloor"
)

// The tests' registries listen on loopback, below the network floor: the
// tests allow it as an operator would with --egress-allow-private.
var loopbackAllowed = netfloor.New(netfloor.Config{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})

func init() { netfloor.SetDefault(loopbackAllowed) }

// TestPullBelowFloor: a registry below the floor is not dialled.
func TestPullBelowFloor(t *testing.T) {
	m, _, _ := newTestManager(t)
	s, blobs := countingRegistry(t)
	netfloor.SetDefault(netfloor.New(netfloor.Config{}))
	defer netfloor.SetDefault(loopbackAllowed)
	_, err := m.Pull(context.Background(), strings.TrimPrefix(s.URL, "http://")+"/test/app:v1", "")
	if err == nil || !strings.Contains(err.Error(), "network floor") || blobs.Load() != 0 {
		t.Fatalf("pull from loopback: %v (blob requests %d), want refused below the floor", err, blobs.Load())
	}
}
