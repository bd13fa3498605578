package webhook

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"
)

type received struct {
	seq  int64
	body map[string]any
}

// receiver is a webhook endpoint on loopback that checks signatures and
// fails the first failures requests with 503.
type receiver struct {
	t        *testing.T
	secret   string
	mu       sync.Mutex
	failures int
	got      []received
	bad      int
	srv      *httptest.Server
	arrived  chan struct{}
}

func newReceiver(t *testing.T, secret string, failures int) *receiver {
	r := &receiver{t: t, secret: secret, failures: failures, arrived: make(chan struct{}, 100)}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		ts := req.Header.Get("X-Sbx-Timestamp")
		sec, err := strconv.ParseInt(ts, 10, 64)
		r.mu.Lock()
		defer r.mu.Unlock()
		if err != nil || time.Since(time.Unix(sec, 0)).Abs() > time.Minute || !Verify(r.secret, ts, body, req.Header.Get("X-Sbx-Signature")) {
			r.bad++
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if r.failures > 0 {
			r.failures--
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		var v map[string]any
		json.Unmarshal(body, &v)
		seq, _ := strconv.ParseInt(req.Header.Get("X-Sbx-Event-Seq"), 10, 64)
		r.got = append(r.got, received{seq, v})
		r.arrived <- struct{}{}
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) wait(n int) []received {
	r.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		r.mu.Lock()
		if len(r.got) >= n {
			out := append([]received(nil), r.got...)
			r.mu.Unlock()
			return out
		}
		r.mu.Unlock()
		select {
		case <-r.arrived:
		case <-deadline:
			r.t.Fatalf("timed out waiting for %d deliveries", n)
		}
	}
}

func TestSignedDeliveryWithRetries(t *testing.T) {
	rcv := newReceiver(t, "s3cret", 2)
	s, err := New(Config{URLs: []string{rcv.srv.URL}, Secret: "s3cret", FirstRetry: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := 1; i <= 3; i++ {
		s.Send(int64(i), map[string]any{"seq": i, "state": "stopped"})
	}
	got := rcv.wait(3)
	for i, r := range got {
		if r.seq != int64(i+1) || r.body["seq"] != float64(i+1) {
			t.Errorf("delivery %d = %+v, want seq %d in order", i, r, i+1)
		}
	}
	if rcv.bad != 0 {
		t.Errorf("%d deliveries failed the signature check", rcv.bad)
	}
}

func TestWrongSecretIsRejected(t *testing.T) {
	body := []byte(`{"a":1}`)
	sig := Signature("right", "123", body)
	if Verify("wrong", "123", body, sig) || Verify("right", "124", body, sig) || Verify("right", "123", []byte(`{"a":2}`), sig) {
		t.Error("a signature verified with another secret, timestamp or body")
	}
	if !Verify("right", "123", body, sig) {
		t.Error("a signature did not verify")
	}
}

// A receiver that hangs must not make Send block; its queue overflows and
// drops, while another receiver still gets every event.
func TestSlowReceiverNeverBlocks(t *testing.T) {
	block := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-block
	}))
	defer slow.Close()
	defer close(block)
	fast := newReceiver(t, "k", 0)
	s, err := New(Config{URLs: []string{slow.URL, fast.srv.URL}, Secret: "k", QueueSize: 4, Timeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	done := make(chan struct{})
	go func() {
		for i := range 20 {
			s.Send(int64(i), map[string]int{"i": i})
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Send blocked on a hanging receiver")
	}
	// The fast receiver's queue holds 4; the rest may be dropped if it is
	// slower than the sender, but what it gets arrives in order.
	got := fast.wait(4)
	for i := 1; i < len(got); i++ {
		if got[i].seq <= got[i-1].seq {
			t.Errorf("out of order: %d after %d", got[i].seq, got[i-1].seq)
		}
	}
	// The hanging receiver holds at most one in flight and 4 queued: the
	// other 15 or more were dropped, and Queues (metrics) says so.
	if queued, dropped := s.Queues(); queued < 3 || dropped < 15 {
		t.Errorf("Queues: %d queued, %d dropped; want >= 3 and >= 15", queued, dropped)
	}
}

func TestRefusalIsFinal(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		mu.Unlock()
		w.WriteHeader(http.StatusBadRequest)
	}))
	defer srv.Close()
	s, _ := New(Config{URLs: []string{srv.URL}, FirstRetry: time.Millisecond})
	s.deliver(s.targets[0], delivery{seq: 1, body: []byte("{}")})
	s.Close()
	if calls != 1 {
		t.Errorf("a 400 was retried: %d calls", calls)
	}
	if _, err := New(Config{URLs: []string{"ftp://x"}}); err == nil {
		t.Error("an ftp URL was accepted")
	}
}

// TestRedirectIsNotFollowed: a receiver's redirect is its answer (a final
// refusal), never a new destination for the event.
func TestRedirectIsNotFollowed(t *testing.T) {
	var mu sync.Mutex
	calls, moved := 0, 0
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		moved++
		mu.Unlock()
	}))
	defer target.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		mu.Unlock()
		http.Redirect(w, r, target.URL, http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	s, _ := New(Config{URLs: []string{srv.URL}, FirstRetry: time.Millisecond})
	s.deliver(s.targets[0], delivery{seq: 1, body: []byte("{}")})
	s.Close()
	if calls != 1 || moved != 0 {
		t.Errorf("receiver calls %d, redirect target calls %d; want 1 and 0", calls, moved)
	}
}

func TestTeamKey(t *testing.T) {
	a, b := TeamKey("s3cret", "a"), TeamKey("s3cret", "b")
	if a == b || a == TeamKey("other", "a") {
		t.Fatalf("team keys: %s %s", a, b)
	}
	// What the documented command prints: printf 'sbx-team:a' | openssl dgst -sha256 -hmac s3cret
	if a != "6a68de34fa6779e725a2c5317de657c8362c473a958b2689b6c47c5440103bf2" {
		t.Fatalf("TeamKey(s3cret, a) = %s", a)
	}
}
