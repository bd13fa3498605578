package netfloor

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
)

func TestCheck(t *testing.T) {
	f := New(Config{NoHost: true, Allow: []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16")}, Deny: []netip.Prefix{netip.MustParsePrefix("203.0.113.0/24")}})
	for _, s := range []string{
		"169.254.169.254", "fd00:ec2::254", "fe80::1", "::ffff:169.254.169.254",
		"10.2.0.1", "172.16.0.1", "192.168.1.1", "100.100.100.200", "fc00::1",
		"127.0.0.1", "::1", "::ffff:127.0.0.1", "0.0.0.0", "::", "224.0.0.1", "255.255.255.255",
		"203.0.113.9",        // added by the operator
		"64:ff9b::a9fe:a9fe", // NAT64 of 169.254.169.254
		"2002:7f00:1::1",     // 6to4 of 127.0.0.1
	} {
		if err := f.Check(netip.MustParseAddr(s)); err == nil || !strings.Contains(err.Error(), "network floor") {
			t.Errorf("Check(%s) = %v, want refused", s, err)
		}
	}
	for _, s := range []string{"10.1.2.3", "8.8.8.8", "2606:4700::1111", "198.51.100.7", "64:ff9b::808:808"} {
		if err := f.Check(netip.MustParseAddr(s)); err != nil {
			t.Errorf("Check(%s) = %v, want allowed", s, err)
		}
	}
	for u, bad := range map[string]bool{
		"http://169.254.169.254/latest": true, "https://[::1]:8443/": true, "http://localhost:9000/": true,
		"http://api.localhost/": true, "https://hooks.example.com/x": false, "http://10.1.0.5/": false,
	} {
		if err := f.CheckURL(u); (err != nil) != bad {
			t.Errorf("CheckURL(%s) = %v, want refused %t", u, err, bad)
		}
	}
}

func TestHostAddresses(t *testing.T) {
	if !IsHostAddr(netip.MustParseAddr("127.0.0.1")) {
		t.Error("127.0.0.1 is not one of the host's addresses")
	}
	if err := New(Config{}).Check(netip.MustParseAddr("127.0.0.1")); err == nil {
		t.Error("the host's loopback passed the floor")
	}
}

// TestClient: the client refuses an address below the floor where it
// dials (a name that resolves there as well as an address), reaches it
// once the operator allows it, and follows no redirect.
func TestClient(t *testing.T) {
	var hits, moved atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { moved.Add(1) }))
	defer target.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Redirect(w, r, target.URL+"/elsewhere", http.StatusFound)
	}))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	for _, u := range []string{srv.URL, "http://localhost:" + port + "/"} {
		_, err := New(Config{NoHost: true}).Client(0).Get(u)
		if err == nil || !strings.Contains(err.Error(), "network floor") {
			t.Errorf("GET %s below the floor: %v, want refused", u, err)
		}
	}
	if hits.Load() != 0 {
		t.Fatalf("the server below the floor got %d requests", hits.Load())
	}
	allowed := New(Config{NoHost: true, Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	resp, err := allowed.Client(0).Get(srv.URL)
	if err != nil {
		t.Fatalf("GET with 127.0.0.1 allowed: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || hits.Load() != 1 || moved.Load() != 0 {
		t.Fatalf("redirect: status %d, hits %d, redirect target hits %d; want 302, 1, 0", resp.StatusCode, hits.Load(), moved.Load())
	}
}

func TestAggregate(t *testing.T) {
	got := Aggregate([]netip.Prefix{
		netip.MustParsePrefix("10.0.2.15/32"), netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("10.0.2.0/24"),
		netip.MustParsePrefix("192.168.0.0/16"), netip.MustParsePrefix("192.168.0.0/16"), netip.MustParsePrefix("9.9.9.9/32"),
	})
	want := "[9.9.9.9/32 10.0.0.0/8 192.168.0.0/16]"
	if fmtList(got) != want {
		t.Fatalf("Aggregate = %s, want %s", fmtList(got), want)
	}
}

func fmtList(ps []netip.Prefix) string {
	var s []string
	for _, p := range ps {
		s = append(s, p.String())
	}
	return "[" + strings.Join(s, " ") + "]"
}
