// Package testtls makes a throwaway certificate authority, a server
// certificate for 127.0.0.1 and a client certificate, as PEM files, for
// tests of TLS and mTLS connections.
package testtls

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// ServerName is the name the server certificate carries (with 127.0.0.1).
const ServerName = "orch-test-server"

// Files are the PEM files of one authority's certificates, in a test's
// temporary directory.
type Files struct {
	CA                    string // the authority's certificate
	ServerCert, ServerKey string
	ClientCert, ClientKey string
	pool                  *x509.CertPool
}

// New makes an authority and its server and client certificates.
func New(t testing.TB) *Files {
	t.Helper()
	dir := t.TempDir()
	caKey := newKey(t)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "orch test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	f := &Files{CA: filepath.Join(dir, "ca.pem"), pool: x509.NewCertPool()}
	f.pool.AddCert(ca)
	writePEM(t, f.CA, "CERTIFICATE", caDER)
	leaf := func(serial int64, name string, usage x509.ExtKeyUsage, certFile, keyFile string) {
		key := newKey(t)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}}
		if usage == x509.ExtKeyUsageServerAuth {
			tmpl.DNSNames, tmpl.IPAddresses = []string{ServerName}, []net.IP{net.ParseIP("127.0.0.1")}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		writePEM(t, certFile, "CERTIFICATE", der)
		kder, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		writePEM(t, keyFile, "EC PRIVATE KEY", kder)
	}
	f.ServerCert, f.ServerKey = filepath.Join(dir, "server.pem"), filepath.Join(dir, "server-key.pem")
	f.ClientCert, f.ClientKey = filepath.Join(dir, "client.pem"), filepath.Join(dir, "client-key.pem")
	leaf(2, ServerName, x509.ExtKeyUsageServerAuth, f.ServerCert, f.ServerKey)
	leaf(3, "orch test client", x509.ExtKeyUsageClientAuth, f.ClientCert, f.ClientKey)
	return f
}

// ServerConfig is a server's TLS configuration that requires a client
// certificate signed by the authority (mTLS).
func (f *Files) ServerConfig(t testing.TB) *tls.Config {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(f.ServerCert, f.ServerKey)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: f.pool,
		MinVersion: tls.VersionTLS12, NextProtos: []string{"h2"}}
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func writePEM(t testing.TB, path, kind string, der []byte) {
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
