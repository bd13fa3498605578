// Package sdk is the Go client for the sbx HTTP API.
//
// A Client talks to one daemon. Every method takes a context first and returns
// an *APIError (test it with IsNotFound, IsConflict, …) when the daemon refuses
// the request:
//
//	c, err := sdk.FromEnv()
//	if err != nil { … }
//	sb, _, err := c.EnsureSandbox(ctx, "grader-1", sdk.CreateSandboxRequest{Image: "alpine"})
//	res, err := c.Sandbox(sb.ID).Exec(ctx, sdk.ExecRequest{Cmd: []string{"uname", "-a"}})
package sdk

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Defaults used by FromEnv.
const (
	DefaultHost    = "http://127.0.0.1:7423"
	DefaultDataDir = "/var/lib/sbx"
)

// Client is a connection to one sbx daemon. It is safe for concurrent use.
type Client struct {
	host  string // scheme://host:port, no trailing slash
	token string
	http  *http.Client
	roots *x509.CertPool // WithCACert; nil: the system's
	err   error          // a bad option; every call returns it
	retry RetryPolicy    // WithRetry; DefaultRetry
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient makes the client send requests through hc. The default client
// has no overall timeout, because exec streams and downloads may run long;
// bound calls with the context instead.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) { c.http = hc }
}

// WithCACert makes the client trust the CA certificates in pem (PEM, one or
// more) for an https:// daemon, in addition to the system's. It applies to
// the HTTP client of WithHTTPClient too (on a copy; the caller's is left as
// it is), when that client's Transport is nil or an *http.Transport. A pem
// without a certificate makes every call fail with an error that says so.
func WithCACert(pem []byte) Option {
	return func(c *Client) {
		roots, err := x509.SystemCertPool()
		if err != nil {
			roots = x509.NewCertPool()
		}
		if !roots.AppendCertsFromPEM(pem) {
			c.err = errors.New("sdk: the CA certificate (WithCACert, SBX_CA_CERT or --ca-cert) holds no PEM certificate")
			return
		}
		c.roots = roots
	}
}

// trustRoots makes c's HTTP client verify the daemon with c.roots.
func (c *Client) trustRoots() {
	if c.roots == nil || c.err != nil {
		return
	}
	var t *http.Transport
	switch rt := c.http.Transport.(type) {
	case nil:
		t = http.DefaultTransport.(*http.Transport).Clone()
	case *http.Transport:
		t = rt.Clone()
	default:
		c.err = fmt.Errorf("sdk: WithCACert needs an *http.Transport, and the HTTP client has a %T", rt)
		return
	}
	if t.TLSClientConfig == nil {
		t.TLSClientConfig = &tls.Config{}
	}
	t.TLSClientConfig.RootCAs = c.roots
	hc := *c.http
	hc.Transport = t
	c.http = &hc
}

// NewClient returns a client for the daemon at host (for example
// "http://127.0.0.1:7423"; a host without a scheme gets "http://") that
// authenticates with token.
func NewClient(host, token string, opts ...Option) *Client {
	host = strings.TrimRight(host, "/")
	if !strings.Contains(host, "://") {
		host = "http://" + host
	}
	c := &Client{host: host, token: token, http: &http.Client{}, retry: DefaultRetry}
	for _, o := range opts {
		o(c)
	}
	c.trustRoots() // after all options: WithHTTPClient may come after WithCACert
	return c
}

// Host returns the base URL the client talks to.
func (c *Client) Host() string { return c.host }

// FromEnv returns a client configured from the environment: the host from
// SBX_HOST (default DefaultHost), the token from TokenFromEnv and, when
// SBX_CA_CERT names a PEM file, the CA an https daemon's certificate is
// checked against (WithCACert).
func FromEnv(opts ...Option) (*Client, error) {
	host := os.Getenv("SBX_HOST")
	if host == "" {
		host = DefaultHost
	}
	token, err := TokenFromEnv()
	if err != nil {
		return nil, err
	}
	if file := os.Getenv("SBX_CA_CERT"); file != "" {
		pem, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("SBX_CA_CERT: %w", err)
		}
		opts = append([]Option{WithCACert(pem)}, opts...)
	}
	return NewClient(host, token, opts...), nil
}

// TokenFromEnv returns the API token from SBX_TOKEN or, when that is unset,
// from the daemon's admin token file <SBX_DATA_DIR or DefaultDataDir>/admin.token.
func TokenFromEnv() (string, error) {
	if t := os.Getenv("SBX_TOKEN"); t != "" {
		return t, nil
	}
	dir := os.Getenv("SBX_DATA_DIR")
	if dir == "" {
		dir = DefaultDataDir
	}
	file := filepath.Join(dir, "admin.token")
	b, err := os.ReadFile(file)
	if err == nil {
		if t := strings.TrimSpace(string(b)); t != "" {
			return t, nil
		}
		return "", fmt.Errorf("%w: %s is empty; set SBX_TOKEN", ErrNoToken, file)
	}
	return "", fmt.Errorf("%w: set SBX_TOKEN, or run as a user who can read %s (%v)", ErrNoToken, file, err)
}

// ErrNoToken is wrapped by the error TokenFromEnv and FromEnv return when
// no token can be found.
var ErrNoToken = errors.New("no API token")

// request describes one API call.
type request struct {
	method      string
	path        string     // already escaped, starts with /v1/…
	query       url.Values // optional
	body        io.Reader  // optional raw body; JSON bodies use in
	in          any        // optional value sent as JSON
	contentType string     // for raw bodies
}

// send performs req and returns the response when its status is 2xx; any
// other status is decoded into an *APIError and the body closed.
func (c *Client) send(ctx context.Context, req request) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		resp, err := c.sendOnce(ctx, req)
		wait, retry := c.retry.next(req, err, attempt)
		if !retry {
			return resp, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

func (c *Client) sendOnce(ctx context.Context, req request) (*http.Response, error) {
	if c.err != nil {
		return nil, c.err
	}
	u := c.host + req.path
	if len(req.query) > 0 {
		u += "?" + req.query.Encode()
	}
	body, ctype := req.body, req.contentType
	if req.in != nil {
		b, err := json.Marshal(req.in)
		if err != nil {
			return nil, fmt.Errorf("encode request: %w", err)
		}
		body, ctype = bytes.NewReader(b), "application/json"
	}
	hr, err := http.NewRequestWithContext(ctx, req.method, u, body)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	if ctype != "" {
		hr.Header.Set("Content-Type", ctype)
	}
	if c.token != "" {
		hr.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(hr)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		var opErr *net.OpError
		if errors.As(err, &opErr) && opErr.Op == "dial" {
			return nil, fmt.Errorf("cannot reach sbx daemon at %s: %w", c.host, err)
		}
		return nil, err // already names the method and URL
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		return nil, c.plainToTLS(decodeError(resp))
	}
	return resp, nil
}

// call performs req and decodes a JSON response into out (when out is not nil).
func (c *Client) call(ctx context.Context, req request, out any) error {
	resp, err := c.send(ctx, req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil || resp.StatusCode == http.StatusNoContent {
		return nil
	}
	return decodeJSON(resp, out)
}

// decodeJSON decodes a response body into out.
func decodeJSON(resp *http.Response, out any) error {
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("decode response to %s %s: %w", resp.Request.Method, resp.Request.URL.Path, err)
	}
	return nil
}

// sandboxPath returns /v1/sandboxes/{idOrName}{suffix}.
func sandboxPath(idOrName, suffix string) string {
	return "/v1/sandboxes/" + url.PathEscape(idOrName) + suffix
}

// imagePath returns /v1/images/{name}; image names may hold slashes
// ("docker.io/library/alpine"), so each segment is escaped on its own.
func imagePath(name string) string {
	segs := strings.Split(name, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return "/v1/images/" + strings.Join(segs, "/")
}

// checkName rejects an empty id or name, whose path would hit a different route.
func checkName(what, v string) error {
	if v == "" {
		return errors.New(what + " must not be empty")
	}
	return nil
}

// plainToTLS names the fix when an http:// client reached an https daemon:
// Go's server answers such a request with a bare 400.
func (c *Client) plainToTLS(err error) error {
	var e *APIError
	if errors.As(err, &e) && e.StatusCode == http.StatusBadRequest && strings.Contains(e.Message, "HTTP request to an HTTPS server") {
		e.Message = fmt.Sprintf("the daemon at %s serves https: use https://%s (and its CA: SBX_CA_CERT or --ca-cert)", c.host, strings.TrimPrefix(c.host, "http://"))
	}
	return err
}
