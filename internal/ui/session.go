package ui

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"sync"
	"time"
)

// CookieName is the dashboard's session cookie. It holds a random session
// id only; the API key stays in the daemon's memory.
const CookieName = "sbx_ui_session"

// session is one logged-in browser. The key is kept (in memory only) so
// that every request is authenticated again by the API: a revoked key ends
// its sessions at once, and scopes, rate limits and the audit log apply to
// the dashboard exactly as to any other client.
type session struct {
	key      string
	csrf     string // sent back in X-Sbx-Csrf on every data request
	created  time.Time
	lastUsed time.Time
}

// sessions is the in-memory session table. A daemon restart logs everyone
// out, which is the price of keeping no secret on disk.
type sessions struct {
	mu      sync.Mutex
	byID    map[string]*session
	idle    time.Duration // a session unused this long ends
	maxAge  time.Duration // and any session ends this long after login
	max     int           // at most this many; the oldest goes first
	nowFunc func() time.Time
}

func newSessions(idle, maxAge time.Duration, max int) *sessions {
	return &sessions{byID: map[string]*session{}, idle: idle, maxAge: maxAge, max: max, nowFunc: time.Now}
}

// randomToken is 32 bytes from the system's CSPRNG, URL-safe.
func randomToken() string {
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand panics on an unusable source)
	return base64.RawURLEncoding.EncodeToString(b)
}

// create starts a session for key and returns its id.
func (s *sessions) create(key string) (id string, sess *session) {
	now := s.nowFunc()
	sess = &session{key: key, csrf: randomToken(), created: now, lastUsed: now}
	id = randomToken()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepLocked(now)
	for len(s.byID) >= s.max {
		s.dropOldestLocked()
	}
	s.byID[id] = sess
	return id, sess
}

// get returns the live session of r's cookie and marks it used.
func (s *sessions) get(r *http.Request) (*session, bool) {
	c, err := r.Cookie(CookieName)
	if err != nil || c.Value == "" {
		return nil, false
	}
	now := s.nowFunc()
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.byID[c.Value]
	if !ok {
		return nil, false
	}
	if s.expired(sess, now) {
		delete(s.byID, c.Value)
		return nil, false
	}
	sess.lastUsed = now
	return sess, true
}

// end forgets the session of r's cookie, if any.
func (s *sessions) end(r *http.Request) {
	if c, err := r.Cookie(CookieName); err == nil {
		s.mu.Lock()
		delete(s.byID, c.Value)
		s.mu.Unlock()
	}
}

// endKey forgets every session of key (its key was found revoked).
func (s *sessions) endKey(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, sess := range s.byID {
		if subtle.ConstantTimeCompare([]byte(sess.key), []byte(key)) == 1 {
			delete(s.byID, id)
		}
	}
}

func (s *sessions) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.byID)
}

func (s *sessions) expired(sess *session, now time.Time) bool {
	return now.Sub(sess.lastUsed) > s.idle || now.Sub(sess.created) > s.maxAge
}

func (s *sessions) sweepLocked(now time.Time) {
	for id, sess := range s.byID {
		if s.expired(sess, now) {
			delete(s.byID, id)
		}
	}
}

func (s *sessions) dropOldestLocked() {
	var oldest string
	var at time.Time
	for id, sess := range s.byID {
		if oldest == "" || sess.lastUsed.Before(at) {
			oldest, at = id, sess.lastUsed
		}
	}
	delete(s.byID, oldest)
}

// validCSRF reports whether r carries sess's CSRF token.
func validCSRF(r *http.Request, sess *session) bool {
	got := r.Header.Get(CSRFHeader)
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(sess.csrf)) == 1
}

// CSRFHeader carries the session's CSRF token on every dashboard data
// request. A page of another origin cannot read the token (it is only in
// GET /ui/session's answer) nor set a custom header on a cross-origin
// request without a CORS preflight, which the daemon never grants.
const CSRFHeader = "X-Sbx-Csrf"
