package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.temporal.io/sdk/client"

	"github.com/orch-cli/orch/runner/record"
)

// Connecting to a real cluster: TLS (mTLS with a client certificate) and an
// API key, named as the temporal CLI names them. The API key is read from
// $TEMPORAL_API_KEY only, never from a flag: orch passes it in the
// environment so that it is never in a process's argv (ps), and nothing
// here prints or records it.

// APIKeyEnv holds the API key sent as "authorization: Bearer KEY".
const APIKeyEnv = "TEMPORAL_API_KEY"

// tlsFlags are the TLS flags, each with its environment variable.
var tlsFlags = []struct{ name, env, usage string }{
	{"tls-cert", "TEMPORAL_TLS_CERT", "the client certificate (PEM) for mTLS"},
	{"tls-key", "TEMPORAL_TLS_KEY", "the client certificate's private key (PEM)"},
	{"tls-ca", "TEMPORAL_TLS_CA", "the CA (PEM) that signed the server's certificate (default: the system's)"},
	{"tls-server-name", "TEMPORAL_TLS_SERVER_NAME", "the name the server's certificate must carry (default: the address's host)"},
}

// connectionFlags registers the TLS flags on fs.
func connectionFlags(fs *pflag.FlagSet) {
	fs.String("tls", os.Getenv("TEMPORAL_TLS"), "true: connect with TLS (implied by the --tls-* flags and an API key); false: never (default $TEMPORAL_TLS)")
	for _, f := range tlsFlags {
		fs.String(f.name, os.Getenv(f.env), f.usage+" (default $"+f.env+")")
	}
}

// connection is how to reach the cluster, from the flags and environment.
type connection struct {
	tls                          string // "", true or false
	cert, key, ca, serverName    string
	apiKey                       string
	address, namespace, identity string
}

func connectionOf(cmd *cobra.Command) connection {
	get := func(name string) string { v, _ := cmd.Flags().GetString(name); return v }
	return connection{tls: get("tls"), cert: get("tls-cert"), key: get("tls-key"), ca: get("tls-ca"), serverName: get("tls-server-name"),
		apiKey: os.Getenv(APIKeyEnv), address: get("temporal-address"), namespace: get("temporal-namespace")}
}

// options are the client's options: TLS when asked for or implied, the API
// key as credentials.
func (c connection) options() (client.Options, error) {
	o := client.Options{HostPort: c.address, Namespace: c.namespace, Logger: quietLogger{}, Identity: c.identity}
	want, err := c.wantTLS()
	if err != nil {
		return o, err
	}
	if want {
		cfg, err := c.tlsConfig()
		if err != nil {
			return o, err
		}
		o.ConnectionOptions.TLS = cfg
	} else if c.tls != "" {
		o.ConnectionOptions.TLSDisabled = true // an API key must not turn it on
	}
	if c.apiKey != "" {
		o.Credentials = client.NewAPIKeyStaticCredentials(c.apiKey)
	}
	if onLoopback(c.address) {
		// The SDK gzips every request by default: on loopback that saves no
		// bandwidth and costs CPU on both sides for each of a run's calls.
		o.ConnectionOptions.GrpcCompression = &client.GrpcCompressionNone{}
	}
	return o, nil
}

// onLoopback says whether a frontend's host:port is on this machine only.
func onLoopback(address string) bool {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		host = address
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// wantTLS: --tls says; unset, any TLS file, server name or an API key
// implies it (as the temporal CLI).
func (c connection) wantTLS() (bool, error) {
	if c.tls != "" {
		on, err := strconv.ParseBool(c.tls)
		if err != nil {
			return false, &exitError{code: 2, msg: fmt.Sprintf("--tls %q: want true or false", c.tls)}
		}
		if !on && (c.cert != "" || c.key != "" || c.ca != "") {
			return false, &exitError{code: 2, msg: "--tls false with --tls-cert, --tls-key or --tls-ca: leave one out"}
		}
		return on, nil
	}
	return c.cert != "" || c.key != "" || c.ca != "" || c.serverName != "" || c.apiKey != "", nil
}

func (c connection) tlsConfig() (*tls.Config, error) {
	cfg := &tls.Config{ServerName: c.serverName, MinVersion: tls.VersionTLS12}
	if (c.cert == "") != (c.key == "") {
		return nil, &exitError{code: 2, msg: "--tls-cert and --tls-key go together: give both, or neither"}
	}
	if c.cert != "" {
		pair, err := tls.LoadX509KeyPair(c.cert, c.key)
		if err != nil {
			return nil, &exitError{code: 2, msg: fmt.Sprintf("--tls-cert %s, --tls-key %s: %v", c.cert, c.key, err)}
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	if c.ca != "" {
		pem, err := os.ReadFile(c.ca)
		if err != nil {
			return nil, &exitError{code: 2, msg: fmt.Sprintf("--tls-ca: %v", err)}
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, &exitError{code: 2, msg: fmt.Sprintf("--tls-ca %s: no PEM certificate in it", c.ca)}
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}

// dial connects to the Temporal frontend the flags name.
func dial(cmd *cobra.Command) (client.Client, error) {
	return dialAs(cmd, "")
}

// dialAs connects with identity ("": the SDK's pid@host).
func dialAs(cmd *cobra.Command, identity string) (client.Client, error) {
	conn := connectionOf(cmd)
	conn.identity = identity
	o, err := conn.options()
	if err != nil {
		return nil, err
	}
	c, err := client.Dial(o)
	if err != nil {
		// Never the key: the error is the SDK's, which does not carry it.
		return nil, &exitError{code: 1, msg: fmt.Sprintf("connecting to Temporal at %s (namespace %s%s): %v", conn.address, conn.namespace, conn.how(o), err)}
	}
	return c, nil
}

// how says how it connected, for an error: TLS, an API key (never its value).
func (c connection) how(o client.Options) string {
	s := ""
	if o.ConnectionOptions.TLS != nil {
		s += ", TLS"
	}
	if c.apiKey != "" {
		s += ", API key from $" + APIKeyEnv
	}
	return s
}

// workerIdentity names a worker in Temporal's UI and CLI: orch-worker@host:pid.
func workerIdentity() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("orch-worker@%s:%d", host, os.Getpid())
}

// recordedConnection adds to t how this run reached the cluster, so that
// orch go, stop and status find it later from any directory: --tls and the
// TLS files' absolute paths (not the API key, which is never recorded).
func recordedConnection(cmd *cobra.Command, t *record.TemporalRun) *record.TemporalRun {
	c := connectionOf(cmd)
	abs := func(p string) string {
		if p == "" {
			return ""
		}
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return p
	}
	t.TLS, t.TLSCert, t.TLSKey, t.TLSCA, t.TLSServerName = c.tls, abs(c.cert), abs(c.key), abs(c.ca), c.serverName
	return t
}

// useRecordedConnection sets the TLS flags not given to what run t
// recorded.
func useRecordedConnection(cmd *cobra.Command, t *record.TemporalRun) {
	for name, v := range map[string]string{"tls": t.TLS, "tls-cert": t.TLSCert, "tls-key": t.TLSKey, "tls-ca": t.TLSCA, "tls-server-name": t.TLSServerName} {
		if v != "" && !cmd.Flags().Changed(name) {
			_ = cmd.Flags().Set(name, v)
		}
	}
}
