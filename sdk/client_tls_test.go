package sdk

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestWithCACert: an https daemon is trusted with its CA only, also through
// a caller's HTTP client, and a pem without a certificate fails every call.
func TestWithCACert(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`[]`))
	}))
	defer srv.Close()
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	ctx := context.Background()

	if _, err := NewClient(srv.URL, "k").ListSandboxes(ctx, ListOptions{}); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("without the CA: %v, want a certificate error", err)
	}
	if _, err := NewClient(srv.URL, "k", WithCACert(caPEM)).ListSandboxes(ctx, ListOptions{}); err != nil {
		t.Fatalf("with the CA: %v", err)
	}
	mine := &http.Client{Timeout: time.Minute}
	if _, err := NewClient(srv.URL, "k", WithCACert(caPEM), WithHTTPClient(mine)).ListSandboxes(ctx, ListOptions{}); err != nil {
		t.Fatalf("with the CA and a caller's client: %v", err)
	}
	if mine.Transport != nil {
		t.Fatal("WithCACert changed the caller's HTTP client")
	}
	if _, err := NewClient(srv.URL, "k", WithCACert([]byte("not pem"))).ListSandboxes(ctx, ListOptions{}); err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Fatalf("bad pem: %v", err)
	}
}

// TestPlainHTTPToTLS: an http:// client of an https daemon is told to use https.
func TestPlainHTTPToTLS(t *testing.T) {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	plain := "http://" + strings.TrimPrefix(srv.URL, "https://")
	_, err := NewClient(plain, "k").ListSandboxes(context.Background(), ListOptions{})
	if err == nil || !strings.Contains(err.Error(), "serves https: use https://") {
		t.Fatalf("got %v, want a hint to use https", err)
	}
}
