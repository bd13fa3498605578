package node

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestKubeletAPIPinsTheAPIServer: the cluster CA signs many client
// certificates (users', other components'); the kubelet API accepts only
// the one naming kube-apiserver, or a name the operator gave.
func TestKubeletAPIPinsTheAPIServer(t *testing.T) {
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "cluster-ca"}, IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	caDER, err := x509.CreateCertificate(rand.Reader, caTpl, caTpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	caFile := filepath.Join(t.TempDir(), "ca.crt")
	os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o600)
	client := func(cn string, dns ...string) tls.Certificate {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: cn, Organization: []string{"system:masters"}},
			DNSNames: dns, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature,
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
		der, err := x509.CreateCertificate(rand.Reader, tpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	}
	get := func(c *Config, cert tls.Certificate) error {
		cfg, err := c.tlsConfig()
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		srv.TLS = cfg
		srv.StartTLS()
		defer srv.Close()
		hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{cert}}}}
		resp, err := hc.Get(srv.URL)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	def := &Config{ClientCA: caFile, NodeName: "n", Address: "127.0.0.1"}
	if err := get(def, client(DefaultClientName)); err != nil {
		t.Fatalf("kube-apiserver's certificate: %v", err)
	}
	for _, cn := range []string{"alice", "system:kube-controller-manager", "system:node:other"} {
		if err := get(def, client(cn)); err == nil {
			t.Errorf("a certificate for %q the CA signed reached the kubelet API", cn)
		}
	}
	named := &Config{ClientCA: caFile, NodeName: "n", Address: "127.0.0.1", ClientNames: []string{"apiserver.internal"}}
	if err := get(named, client("x", "apiserver.internal")); err != nil {
		t.Fatalf("a configured SAN: %v", err)
	}
	if err := get(named, client(DefaultClientName)); err == nil {
		t.Error("the default name was accepted although the operator named another")
	}
}
