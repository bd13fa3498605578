package network

import (
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestParseConntrack(t *testing.T) {
	table := `ipv4     2 tcp      6 119 TIME_WAIT src=10.88.0.1 dst=10.88.0.2 sport=51124 dport=8081 src=10.88.0.2 dst=10.88.0.1 sport=8081 dport=51124 [ASSURED] mark=0 zone=0 use=2
ipv4     2 tcp      6 30 TIME_WAIT src=10.88.0.1 dst=10.88.0.2 sport=51000 dport=8081 src=10.88.0.2 dst=10.88.0.1 sport=8081 dport=51000 [ASSURED] mark=0 zone=0 use=2
ipv4     2 tcp      6 431999 ESTABLISHED src=10.88.0.2 dst=192.0.2.7 sport=40000 dport=443 src=192.0.2.7 dst=192.168.1.5 sport=443 dport=40000 [ASSURED] mark=0 zone=0 use=2
ipv4     2 tcp      6 9 CLOSE src=10.88.0.2 dst=192.0.2.7 sport=40001 dport=443 src=192.0.2.7 dst=192.168.1.5 sport=443 dport=40001 mark=0 zone=0 use=2
ipv4     2 tcp      6 431999 ESTABLISHED src=10.88.0.3 dst=192.0.2.7 sport=40000 dport=443 src=192.0.2.7 dst=192.168.1.5 sport=443 dport=40000 [ASSURED] mark=0 zone=0 use=2
ipv4     2 udp      17 20 src=10.88.0.2 dst=10.88.0.1 sport=5353 dport=53 src=10.88.0.1 dst=10.88.0.2 sport=53 dport=5353 mark=0 zone=0 use=2
garbage line
`
	got, err := parseConntrack(strings.NewReader(table), netip.MustParseAddr("10.88.0.2"), 120*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	want := []Conn{
		// one second into TIME_WAIT: gVisor may hold it 61 s more
		{Local: netip.MustParseAddrPort("10.88.0.2:8081"), Remote: netip.MustParseAddrPort("10.88.0.1:51124"), State: "TIME_WAIT", Closing: 61 * time.Second},
		// 90 s into TIME_WAIT (30 s left of 120): gone from gVisor, left out
		{Local: netip.MustParseAddrPort("10.88.0.2:40000"), Remote: netip.MustParseAddrPort("192.0.2.7:443"), State: "ESTABLISHED"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%d: %+v, want %+v", i, got[i], want[i])
		}
	}
}
