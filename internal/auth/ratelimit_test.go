package auth

import (
	"testing"

	"github.com/sbxhq/sbx/internal/errdefs"
)

func TestRateLimitsPerKey(t *testing.T) {
	l := NewRateLimits(0.001, 3) // a token every 1000 s: the burst is all there is
	for i := range 3 {
		if _, err := l.Allow("a"); err != nil {
			t.Fatalf("request %d of the burst refused: %v", i, err)
		}
	}
	d, err := l.Allow("a")
	if !errdefs.Is(err, errdefs.KindRateLimited) || d <= 0 {
		t.Fatalf("4th request: retry %v, err %v; want RATE_LIMITED with a positive retry", d, err)
	}
	if _, err := l.Allow("b"); err != nil {
		t.Fatalf("another key was limited by a's burst: %v", err)
	}
	var off *RateLimits
	if _, err := off.Allow("a"); err != nil {
		t.Fatalf("nil limits refused: %v", err)
	}
}
