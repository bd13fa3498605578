package wire

import "time"

// Actions of an HTTP egress rule (HTTPRule.Action).
const (
	HTTPActionAllow   = "allow"   // pass the request on unchanged
	HTTPActionDeny    = "deny"    // answer 403 with a body naming the rule
	HTTPActionInject  = "inject"  // add headers whose values are secrets, then pass on
	HTTPActionRewrite = "rewrite" // change scheme, host or path prefix, then pass on
	HTTPActionForward = "forward" // ask the operator's handler what to do
)

// HTTPEgress is the http section of an egress policy. With it the daemon
// sees a bridge sandbox's outbound HTTP (TCP port 80) and HTTPS (TCP 443):
// both are redirected to a proxy in the daemon, transparently. HTTPS is
// decrypted only for hosts a rule names (with a certificate from the
// daemon's CA, which every sandbox trusts); other HTTPS passes untouched.
// Rules are tried in order; the first that matches decides. A request no
// rule matches is passed on (logged with rule -1).
type HTTPEgress struct {
	// The rules, tried in order; the first that matches decides.
	Rules []HTTPRule `json:"rules"`
}

// HTTPRule matches requests by host ("api.example.com", "*.example.com" for
// every name below it, or "*" for every host), optionally method and path
// prefix, and applies Action. Inject, Rewrite and Forward go with the
// action of the same name.
type HTTPRule struct {
	// The host it matches: "api.example.com", "*.example.com" for every name below it, or "*" for
	// every host.
	Host       string `json:"host"`
	Method     string `json:"method,omitempty"`     // e.g. "POST"; any when ""
	PathPrefix string `json:"pathPrefix,omitempty"` // e.g. "/v1/"; any when ""
	// What to do with a matching request: allow, deny (403), inject, rewrite or forward.
	Action string `json:"action"`
	// Headers to set from secrets (action inject).
	Inject []HTTPInject `json:"inject,omitempty"`
	// Where to send the request instead (action rewrite).
	Rewrite *HTTPRewrite `json:"rewrite,omitempty"`
	// The operator's handler to ask (action forward).
	Forward *HTTPForwardTo `json:"forward,omitempty"`
}

// HTTPInject sets header Header to Prefix + the value of the team's secret
// Secret (see SecretInfo), replacing what the sandbox sent. The value is
// added on the way out; it never enters the sandbox.
type HTTPInject struct {
	// The header to set, e.g. "Authorization".
	Header string `json:"header"`
	// The name of the team's secret whose value goes into the header.
	Secret string `json:"secret"`
	Prefix string `json:"prefix,omitempty"` // e.g. "Bearer "
}

// HTTPRewrite changes where a request goes: any of scheme ("http" or
// "https"), host (a name or name:port), and the matched path prefix
// (replaced by PathPrefix).
type HTTPRewrite struct {
	// The new scheme: "http" or "https". Absent: unchanged.
	Scheme string `json:"scheme,omitempty"`
	// The new host, a name or name:port. Absent: unchanged.
	Host string `json:"host,omitempty"`
	// Replaces the rule's matched path prefix. Absent: unchanged.
	PathPrefix string `json:"pathPrefix,omitempty"`
}

// HTTPForwardTo sends each matching request's method, URL and headers (and
// its body up to 1 MiB when Body) as an HTTPHandlerRequest to URL, POSTed
// and signed like the daemon's webhooks (X-Sbx-Timestamp, X-Sbx-Signature)
// but with the sandbox's team's key, derived from --webhook-secret
// (webhook.TeamKey; the team is in X-Sbx-Team). URL must be above the
// operator's network floor, and a redirect it answers is not followed.
// The handler answers an HTTPHandlerAnswer within
// TimeoutSeconds (default 5, at most 60); if it does not, or answers
// nonsense, the request is passed on when FailOpen, else answered 502.
type HTTPForwardTo struct {
	// The handler's URL (http or https), POSTed an HTTPHandlerRequest.
	URL string `json:"url"`
	// How long to wait for the handler's answer (at most 60). Default: 5.
	TimeoutSeconds int `json:"timeoutSeconds,omitempty"`
	// Pass the request on when the handler does not answer in time or answers nonsense (else 502).
	// Default: false.
	FailOpen bool `json:"failOpen,omitempty"`
	// Send the request's body too (up to 1 MiB). Default: false.
	Body bool `json:"body,omitempty"`
}

// HTTPHandlerRequest is what a forward rule's handler receives.
type HTTPHandlerRequest struct {
	Sandbox string              `json:"sandbox"` // the sandbox's id
	Method  string              `json:"method"`
	URL     string              `json:"url"`
	Headers map[string][]string `json:"headers"`
	Body    []byte              `json:"body,omitempty"` // base64 in JSON; only with HTTPForwardTo.Body
}

// Answers of a handler (HTTPHandlerAnswer.Action).
const (
	HandlerAllow   = "allow"   // pass the request on unchanged
	HandlerDeny    = "deny"    // answer 403 with Reason
	HandlerModify  = "modify"  // pass on Request instead
	HandlerRespond = "respond" // answer Response without going out
)

// HTTPHandlerAnswer is a forward rule handler's answer.
type HTTPHandlerAnswer struct {
	Action   string               `json:"action"`
	Reason   string               `json:"reason,omitempty"`
	Request  *HTTPHandlerModified `json:"request,omitempty"`
	Response *HTTPHandlerResponse `json:"response,omitempty"`
}

// HTTPHandlerModified is the request to send instead (modify); empty
// fields keep the original's, Headers replaces all headers when set.
type HTTPHandlerModified struct {
	Method  string              `json:"method,omitempty"`
	URL     string              `json:"url,omitempty"`
	Headers map[string][]string `json:"headers,omitempty"`
}

// HTTPHandlerResponse is a synthetic answer (respond).
type HTTPHandlerResponse struct {
	Status  int                 `json:"status"`
	Headers map[string][]string `json:"headers,omitempty"`
	Body    string              `json:"body,omitempty"`
}

// EgressLogEntry is one line of a sandbox's HTTP egress log: a request the
// proxy saw (or, for HTTPS it passed through untouched, the connection:
// method "TLS", the SNI as host, action "passthrough").
type EgressLogEntry struct {
	// When the request came.
	Time   time.Time `json:"time"`
	Scheme string    `json:"scheme"` // http, https
	// The request's HTTP method.
	Method string `json:"method"`
	// The host the sandbox asked for.
	Host string `json:"host"`
	// The request's path.
	Path       string  `json:"path,omitempty"`
	Status     int     `json:"status"`     // 0 when no answer came
	Bytes      int64   `json:"bytes"`      // response body bytes sent to the sandbox
	DurationMs float64 `json:"durationMs"` // until the answer's last byte
	Rule       int     `json:"rule"`       // index of the rule applied; -1 for none
	Action     string  `json:"action"`     // what was done: allow, deny, inject, rewrite, forward, passthrough, error
	// Why the request failed, when it did (action error).
	Error string `json:"error,omitempty"`
}
