package auth

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// RateLimits gives every API key its own token bucket: perSecond requests
// a second on average, bursts of up to burst. One key's flood never slows
// another key. The zero value (or perSecond <= 0) limits nothing.
type RateLimits struct {
	perSecond rate.Limit
	burst     int
	buckets   sync.Map // key id → *rate.Limiter
}

// NewRateLimits returns per-key limits; perSecond <= 0 turns them off.
func NewRateLimits(perSecond float64, burst int) *RateLimits {
	if burst < 1 {
		burst = max(1, int(math.Ceil(perSecond)))
	}
	return &RateLimits{perSecond: rate.Limit(perSecond), burst: burst}
}

// Allow takes a token of keyID's bucket, or returns a RATE_LIMITED error
// and how long until one is there (for Retry-After).
func (l *RateLimits) Allow(keyID string) (retryAfter time.Duration, err error) {
	if l == nil || l.perSecond <= 0 {
		return 0, nil
	}
	v, ok := l.buckets.Load(keyID)
	if !ok {
		v, _ = l.buckets.LoadOrStore(keyID, rate.NewLimiter(l.perSecond, l.burst))
	}
	r := v.(*rate.Limiter).Reserve()
	if d := r.Delay(); d > 0 {
		r.Cancel() // a refused request does not use up the future
		return d, errdefs.RateLimited(wire.CodeRateLimited,
			"API key %s sent more than %g requests a second (bursts of %d); retry in %s", keyID, float64(l.perSecond), l.burst, d.Round(time.Millisecond))
	}
	return 0, nil
}
