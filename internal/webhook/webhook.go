// Package webhook delivers sandbox events to HTTP receivers.
//
// Each event is POSTed as JSON to every configured URL, signed so that a
// receiver can check it came from this daemon:
//
//	X-Sbx-Timestamp: <unix seconds>
//	X-Sbx-Signature: sha256=<hex HMAC-SHA256 of "<timestamp>.<body>" keyed with the secret>
//
// A receiver recomputes the HMAC over the timestamp, a dot and the raw body,
// compares in constant time, and rejects timestamps too far from its clock
// (replays). X-Sbx-Event-Seq carries the event's sequence number, which
// stays the same across retries, for deduplication.
//
// Delivery never delays the lifecycle: Send only queues. Each URL has its
// own bounded queue and goroutine, so a slow receiver holds up only itself;
// a failed delivery (network error, 408, 429, 5xx) is retried with
// exponential backoff, other statuses are final; when a queue is full the
// event is dropped for that URL with a log line. Delivery is in order per
// URL and at least once while the daemon runs (a receiver whose answer is
// lost sees the event again); events still queued when it stops are lost.
package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Config configures a Sender. Zero values take the defaults.
type Config struct {
	URLs       []string
	Secret     string // HMAC key; without one, requests are not signed
	QueueSize  int    // per URL; default 1000
	Attempts   int    // per event; default 8
	FirstRetry time.Duration
	MaxRetry   time.Duration
	Timeout    time.Duration // per attempt; default 10 s
	// Client sends the requests; default: one that follows no redirects
	// (a receiver's 3xx is a refusal, not a new destination).
	Client *http.Client
	Logger *slog.Logger
}

// Sender delivers events to the configured URLs.
type Sender struct {
	cfg     Config
	targets []*target
	stop    chan struct{}
	wg      sync.WaitGroup
	dropped atomic.Uint64 // events dropped on a full queue, for metrics
}

type target struct {
	url   string
	queue chan delivery
}

type delivery struct {
	seq  int64
	body []byte
}

// Signature returns the X-Sbx-Signature value of body sent at timestamp ts.
func Signature(secret, ts string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts))
	mac.Write([]byte("."))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// TeamKey is the key that signs what the daemon sends for team (the
// handlers of its egress forward rules): hex(HMAC-SHA256(secret,
// "sbx-team:" + team)). The operator, who holds secret, gives each team its
// key, e.g. `printf 'sbx-team:%s' TEAM | openssl dgst -sha256 -hmac "$SBX_WEBHOOK_SECRET"`;
// a team's key verifies no other team's requests.
func TeamKey(secret, team string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("sbx-team:" + team))
	return hex.EncodeToString(mac.Sum(nil))
}

// Verify reports whether sig is the signature of body at ts under secret.
func Verify(secret, ts string, body []byte, sig string) bool {
	return hmac.Equal([]byte(Signature(secret, ts, body)), []byte(sig))
}

// CheckURL reports whether u can be a webhook URL.
func CheckURL(u string) error {
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return fmt.Errorf("webhook URL %q must be an absolute http or https URL", u)
	}
	return nil
}

// New starts a Sender. Close stops it.
func New(cfg Config) (*Sender, error) {
	if cfg.QueueSize <= 0 {
		cfg.QueueSize = 1000
	}
	if cfg.Attempts <= 0 {
		cfg.Attempts = 8
	}
	if cfg.FirstRetry <= 0 {
		cfg.FirstRetry = 500 * time.Millisecond
	}
	if cfg.MaxRetry <= 0 {
		cfg.MaxRetry = time.Minute
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s := &Sender{cfg: cfg, stop: make(chan struct{})}
	for _, u := range cfg.URLs {
		if err := CheckURL(u); err != nil {
			return nil, err
		}
		t := &target{url: u, queue: make(chan delivery, cfg.QueueSize)}
		s.targets = append(s.targets, t)
		s.wg.Add(1)
		go s.run(t)
	}
	return s, nil
}

// Send queues v (marshalled to JSON now) for every URL; seq identifies the
// event. It never blocks.
func (s *Sender) Send(seq int64, v any) {
	if s == nil || len(s.targets) == 0 {
		return
	}
	body, err := json.Marshal(v)
	if err != nil {
		s.cfg.Logger.Error("webhook: encode event", "err", err)
		return
	}
	for _, t := range s.targets {
		select {
		case t.queue <- delivery{seq: seq, body: body}:
		default:
			s.dropped.Add(1)
			s.cfg.Logger.Warn("webhook: queue full, dropping event", "url", t.url, "seq", seq)
		}
	}
}

// Queues reports the events waiting for delivery over all URLs, and how many
// were dropped since New because a queue was full.
func (s *Sender) Queues() (queued int, dropped uint64) {
	if s == nil {
		return 0, 0
	}
	for _, t := range s.targets {
		queued += len(t.queue)
	}
	return queued, s.dropped.Load()
}

// Close stops delivering; queued events are dropped.
func (s *Sender) Close() {
	if s == nil {
		return
	}
	close(s.stop)
	s.wg.Wait()
}

func (s *Sender) run(t *target) {
	defer s.wg.Done()
	for {
		select {
		case <-s.stop:
			return
		case d := <-t.queue:
			s.deliver(t, d)
		}
	}
}

// deliver tries d until it is accepted, refused for good, or out of attempts.
func (s *Sender) deliver(t *target, d delivery) {
	wait := s.cfg.FirstRetry
	for attempt := 1; ; attempt++ {
		retry, err := s.post(t.url, d)
		if err == nil {
			return
		}
		if !retry || attempt >= s.cfg.Attempts {
			s.cfg.Logger.Warn("webhook: giving up on event", "url", t.url, "seq", d.seq, "attempts", attempt, "err", err)
			return
		}
		select {
		case <-s.stop:
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, s.cfg.MaxRetry)
	}
}

func (s *Sender) post(u string, d delivery) (retry bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.Timeout)
	defer cancel()
	go func() {
		select {
		case <-s.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(d.body))
	if err != nil {
		return false, err
	}
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "sbx-webhook/1")
	req.Header.Set("X-Sbx-Event-Seq", strconv.FormatInt(d.seq, 10))
	req.Header.Set("X-Sbx-Timestamp", ts)
	if s.cfg.Secret != "" {
		req.Header.Set("X-Sbx-Signature", Signature(s.cfg.Secret, ts, d.body))
	}
	resp, err := s.cfg.Client.Do(req)
	if err != nil {
		return true, err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	switch {
	case resp.StatusCode/100 == 2:
		return false, nil
	case resp.StatusCode == http.StatusRequestTimeout, resp.StatusCode == http.StatusTooManyRequests, resp.StatusCode >= 500:
		return true, fmt.Errorf("receiver answered %s", resp.Status)
	}
	return false, fmt.Errorf("receiver refused the event: %s", resp.Status)
}
