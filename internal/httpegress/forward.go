package httpegress

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/sbxhq/sbx/internal/webhook"
	"github.com/sbxhq/sbx/wire"
)

// Limits of a forward rule's exchange with its handler.
const (
	maxHandlerBody   = 1 << 20 // of the request body sent to the handler
	maxHandlerAnswer = 1 << 20
)

// forward asks rule's handler about r. done: the answer is written (deny,
// a synthetic response, or a failure when fail-closed). moved: the handler
// sent the request elsewhere, so its host must be dialled by name.
func (cn *conn) forward(w http.ResponseWriter, r *http.Request, sb Sandbox, idx int, f *wire.HTTPForwardTo, e *wire.EgressLogEntry) (done, moved bool) {
	ans, err := cn.askHandler(r, sb, f)
	if err != nil {
		e.Error = fmt.Sprintf("handler: %v", err)
		if f.FailOpen {
			return false, false // passed on as if allowed; the log keeps the error
		}
		e.Action = "error"
		http.Error(w, fmt.Sprintf("sbx egress: the handler of rule %d failed (fail-closed): %v", idx, err), http.StatusBadGateway)
		return true, false
	}
	switch ans.Action {
	case wire.HandlerAllow:
		return false, false
	case wire.HandlerDeny:
		e.Action = wire.HTTPActionDeny
		reason := ans.Reason
		if reason == "" {
			reason = "denied by the handler"
		}
		http.Error(w, fmt.Sprintf("sbx egress: rule %d: %s", idx, reason), http.StatusForbidden)
		return true, false
	case wire.HandlerRespond:
		resp := ans.Response
		for k, vs := range resp.Headers {
			for _, v := range vs {
				w.Header().Add(k, v)
			}
		}
		w.WriteHeader(resp.Status)
		io.WriteString(w, resp.Body)
		return true, false
	default: // HandlerModify, checked by askHandler
		m := ans.Request
		before := r.URL.Scheme + "://" + r.URL.Host
		if m.Method != "" {
			r.Method = m.Method
		}
		if m.URL != "" {
			u, _ := url.Parse(m.URL)
			r.URL = u
		}
		if m.Headers != nil {
			r.Header = http.Header(m.Headers).Clone()
		}
		return false, r.URL.Scheme+"://"+r.URL.Host != before
	}
}

// askHandler POSTs the request's description to the handler, signed like
// the daemon's webhooks but with the sandbox's team's key (webhook.TeamKey:
// one team's handler cannot pass for another's), and checks its answer.
// The handler client dials nothing below the network floor and follows no
// redirect (netfloor.Floor.Client).
func (cn *conn) askHandler(r *http.Request, sb Sandbox, f *wire.HTTPForwardTo) (*wire.HTTPHandlerAnswer, error) {
	hr := wire.HTTPHandlerRequest{Sandbox: sb.ID, Method: r.Method, URL: r.URL.String(), Headers: r.Header}
	if f.Body && r.Body != nil {
		body, err := io.ReadAll(io.LimitReader(r.Body, maxHandlerBody+1))
		if err != nil {
			return nil, fmt.Errorf("read the request body: %w", err)
		}
		if len(body) > maxHandlerBody {
			return nil, fmt.Errorf("the request body is over %d bytes", maxHandlerBody)
		}
		hr.Body = body
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
	}
	payload, err := json.Marshal(hr)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(r.Context(), time.Duration(f.TimeoutSeconds)*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.URL, bytes.NewReader(payload))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if s := cn.p.cfg.HandlerSecret; s != "" {
		ts := strconv.FormatInt(time.Now().Unix(), 10)
		req.Header.Set("X-Sbx-Timestamp", ts)
		req.Header.Set("X-Sbx-Team", sb.Team)
		req.Header.Set("X-Sbx-Signature", webhook.Signature(webhook.TeamKey(s, sb.Team), ts, payload))
	}
	resp, err := cn.p.handler.Do(req)
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return nil, fmt.Errorf("no answer within %ds", f.TimeoutSeconds)
		}
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("answered %s", resp.Status)
	}
	var ans wire.HTTPHandlerAnswer
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxHandlerAnswer)).Decode(&ans); err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return nil, fmt.Errorf("no answer within %ds", f.TimeoutSeconds)
		}
		return nil, fmt.Errorf("answer is not JSON: %w", err)
	}
	return &ans, checkAnswer(&ans)
}

func checkAnswer(a *wire.HTTPHandlerAnswer) error {
	switch a.Action {
	case wire.HandlerAllow, wire.HandlerDeny:
	case wire.HandlerRespond:
		if a.Response == nil || a.Response.Status < 100 || a.Response.Status > 599 {
			return fmt.Errorf("answer respond needs a response with a status from 100 to 599")
		}
	case wire.HandlerModify:
		if a.Request == nil {
			return fmt.Errorf("answer modify needs a request")
		}
		if a.Request.URL != "" {
			u, err := url.Parse(a.Request.URL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return fmt.Errorf("answer modify: url %q is not an absolute http(s) URL", a.Request.URL)
			}
		}
	default:
		return fmt.Errorf("unknown answer action %q: use allow, deny, modify or respond", a.Action)
	}
	return nil
}
