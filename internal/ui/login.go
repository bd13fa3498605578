package ui

import (
	"mime"
	"net/http"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/httpjson"
	"github.com/sbxhq/sbx/wire"
)

// LoginRequest is the body of POST /ui/login (JSON, or a form with the
// field "key" when the page runs without script).
type LoginRequest struct {
	Key string `json:"key"`
}

// SessionInfo answers POST /ui/login and GET /ui/session.
type SessionInfo struct {
	CSRF   string       `json:"csrf"` // send it in X-Sbx-Csrf
	KeyID  string       `json:"keyId"`
	Team   string       `json:"team"`
	Scopes []auth.Scope `json:"scopes"`
}

func infoOf(sess *session, p auth.Principal) SessionInfo {
	return SessionInfo{CSRF: sess.csrf, KeyID: p.KeyID, Team: p.Team, Scopes: p.Scopes}
}

// login trades an API key for a session cookie.
func (u *UI) login(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) { // a login from another site would log the browser in as someone else
		httpjson.WriteError(w, errdefs.Forbidden(wire.CodeUnauthorized, "a dashboard login must come from the dashboard's own origin"))
		return
	}
	form := false
	var req LoginRequest
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct == "application/x-www-form-urlencoded" {
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
		if err := r.ParseForm(); err != nil {
			httpjson.WriteError(w, errdefs.Invalid(wire.CodeInvalidJSON, "unreadable login form"))
			return
		}
		form, req.Key = true, r.PostForm.Get("key")
	} else if err := httpjson.Decode(w, r, &req); err != nil {
		httpjson.WriteError(w, err)
		return
	}
	p, err := u.cfg.Gate.Key(r.Context(), req.Key)
	if err != nil {
		if form {
			http.Redirect(w, r, "/ui/#login-failed", http.StatusSeeOther)
			return
		}
		httpjson.WriteError(w, errdefs.Unauthorized(wire.CodeUnauthorized, "wrong API key"))
		return
	}
	w, r, end, err := u.cfg.Gate.HTTP(w, r, p, loginOp)
	defer end()
	if err != nil {
		httpjson.WriteError(w, err)
		return
	}
	id, sess := u.sessions.create(req.Key)
	http.SetCookie(w, &http.Cookie{
		Name: CookieName, Value: id, Path: Prefix,
		MaxAge: int(u.cfg.SessionMaxAge.Seconds()), HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: r.TLS != nil,
	})
	if form {
		http.Redirect(w, r, Prefix, http.StatusSeeOther)
		return
	}
	httpjson.Write(w, http.StatusOK, infoOf(sess, p))
}

func (u *UI) logout(w http.ResponseWriter, r *http.Request, _ *session, _ auth.Principal) {
	u.sessions.end(r)
	clearCookie(w, r)
	w.WriteHeader(http.StatusNoContent)
}

func (u *UI) sessionInfo(w http.ResponseWriter, r *http.Request, sess *session, p auth.Principal) {
	httpjson.Write(w, http.StatusOK, infoOf(sess, p))
}

func clearCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: Prefix, MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
}
