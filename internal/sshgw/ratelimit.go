package sshgw

import (
	"sync"
	"time"
)

// failureLimiter counts failed logins per client address. An address that
// fails more than burst times is shut out (its connections are closed
// before the key exchange, which is what costs CPU) until its budget has
// refilled at one failure per refill. Logins that succeed cost nothing, so
// one noisy client does not lock out others.
type failureLimiter struct {
	burst  float64
	refill time.Duration
	now    func() time.Time

	mu    sync.Mutex
	peers map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

// maxPeers bounds the table; past it the fullest buckets (least suspect
// peers) are dropped first by a sweep.
const maxPeers = 65536

func newFailureLimiter(burst int, refill time.Duration) *failureLimiter {
	return &failureLimiter{burst: float64(burst), refill: refill, now: time.Now, peers: map[string]*bucket{}}
}

// level refreshes and returns ip's bucket; l.mu is held.
func (l *failureLimiter) level(ip string) *bucket {
	now := l.now()
	b := l.peers[ip]
	if b == nil {
		if len(l.peers) >= maxPeers {
			l.sweep()
		}
		b = &bucket{tokens: l.burst, at: now}
		l.peers[ip] = b
		return b
	}
	b.tokens = min(l.burst, b.tokens+float64(now.Sub(b.at))/float64(l.refill))
	b.at = now
	return b
}

// Allowed reports whether ip may try to log in.
func (l *failureLimiter) Allowed(ip string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.level(ip).tokens >= 1
}

// Failed spends one of ip's failures.
func (l *failureLimiter) Failed(ip string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.level(ip)
	b.tokens = max(0, b.tokens-1)
}

// sweep forgets peers whose budget is full again.
func (l *failureLimiter) sweep() {
	now := l.now()
	for ip, b := range l.peers {
		if b.tokens+float64(now.Sub(b.at))/float64(l.refill) >= l.burst {
			delete(l.peers, ip)
		}
	}
}
