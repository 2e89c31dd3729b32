package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/orch-cli/orch/internal/testtls"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

// securedFrontend is a fake Temporal frontend behind mTLS: it answers the
// client's first call and signals, and keeps what each call carried.
type securedFrontend struct {
	workflowservice.UnimplementedWorkflowServiceServer
	mu      sync.Mutex
	auth    []string // each call's authorization metadata
	clients []string // each call's verified client certificate
	signals []string
}

func (f *securedFrontend) GetSystemInfo(context.Context, *workflowservice.GetSystemInfoRequest) (*workflowservice.GetSystemInfoResponse, error) {
	return &workflowservice.GetSystemInfoResponse{}, nil
}

func (f *securedFrontend) SignalWorkflowExecution(_ context.Context, r *workflowservice.SignalWorkflowExecutionRequest) (*workflowservice.SignalWorkflowExecutionResponse, error) {
	f.mu.Lock()
	f.signals = append(f.signals, r.GetWorkflowExecution().GetWorkflowId()+" "+r.GetSignalName())
	f.mu.Unlock()
	return &workflowservice.SignalWorkflowExecutionResponse{}, nil
}

func (f *securedFrontend) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	client := ""
	if p, ok := peer.FromContext(ctx); ok {
		if ti, ok := p.AuthInfo.(credentials.TLSInfo); ok && len(ti.State.VerifiedChains) > 0 {
			client = ti.State.VerifiedChains[0][0].Subject.CommonName
		}
	}
	f.mu.Lock()
	f.auth = append(f.auth, strings.Join(md.Get("authorization"), ","))
	f.clients = append(f.clients, client)
	f.mu.Unlock()
	return h(ctx, req)
}

func startSecuredFrontend(t *testing.T, certs *testtls.Files) (*securedFrontend, string) {
	t.Helper()
	f := &securedFrontend{}
	s := grpc.NewServer(grpc.Creds(credentials.NewTLS(certs.ServerConfig(t))), grpc.UnaryInterceptor(f.intercept))
	workflowservice.RegisterWorkflowServiceServer(s, f)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.Serve(l) }()
	t.Cleanup(s.Stop)
	return f, l.Addr().String()
}

const testAPIKey = "s3cret-api-key-7f2c"

// TestSecuredConnection: orch-temporal reaches a frontend that requires a
// client certificate, with the API key from $TEMPORAL_API_KEY sent as
// authorization: Bearer on every call; a run records the TLS files, not the
// key, and orch-temporal go of it later connects the same way with no
// flags. The key is in no error. Before: no --tls flags (exit 2, unknown
// flag), and no key sent.
func TestSecuredConnection(t *testing.T) {
	certs := testtls.New(t)
	fe, addr := startSecuredFrontend(t, certs)
	t.Setenv(APIKeyEnv, testAPIKey)
	id := "r1"
	db, dbFile := temporalStore(t, id, "tok")
	db.Close()
	// The recorded run is on the secured frontend; the flags go on the
	// command line, the key stays in the environment.
	tlsArgs := []string{"--temporal-address", addr, "--tls-ca", certs.CA, "--tls-cert", certs.ClientCert, "--tls-key", certs.ClientKey, "--tls-server-name", testtls.ServerName}
	var stderr bytes.Buffer
	code := execute(append(append([]string{"go", "--db", dbFile}, tlsArgs...), id, "A"), &stderr)
	if code != 0 {
		t.Fatalf("orch-temporal go over mTLS: exit %d: %s", code, stderr.String())
	}
	fe.mu.Lock()
	if len(fe.auth) == 0 || len(fe.signals) != 1 || fe.signals[0] != "orch-r1 orch.go" {
		t.Fatalf("calls %v, signals %v", fe.auth, fe.signals)
	}
	for i, a := range fe.auth {
		if a != "Bearer "+testAPIKey || fe.clients[i] != "orch test client" {
			t.Fatalf("call %d: authorization %q, client certificate %q", i, a, fe.clients[i])
		}
	}
	fe.mu.Unlock()

	// Without the client certificate, the frontend refuses the handshake:
	// a clear error that names the address and TLS, never the key.
	stderr.Reset()
	code = execute([]string{"go", "--db", dbFile, "--temporal-address", addr, "--tls-ca", certs.CA, "--tls-server-name", testtls.ServerName, id, "A"}, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "connecting to Temporal at "+addr) || !strings.Contains(stderr.String(), "TLS, API key from $TEMPORAL_API_KEY") {
		t.Fatalf("without a client certificate: exit %d: %s", code, stderr.String())
	}
	if strings.Contains(stderr.String(), testAPIKey) {
		t.Fatalf("the API key is in the error: %s", stderr.String())
	}
	// The same from the temporal CLI's variables alone.
	for name, v := range map[string]string{"TEMPORAL_ADDRESS": addr, "TEMPORAL_TLS_CA": certs.CA, "TEMPORAL_TLS_CERT": certs.ClientCert,
		"TEMPORAL_TLS_KEY": certs.ClientKey, "TEMPORAL_TLS_SERVER_NAME": testtls.ServerName} {
		t.Setenv(name, v)
	}
	stderr.Reset()
	if code := execute([]string{"go", "--db", dbFile, "--temporal-address", addr, id, "A"}, &stderr); code != 0 {
		t.Fatalf("orch-temporal go with the TEMPORAL_TLS_* variables: exit %d: %s", code, stderr.String())
	}
	fe.mu.Lock()
	if n := len(fe.signals); n != 2 || fe.auth[len(fe.auth)-1] != "Bearer "+testAPIKey || fe.clients[len(fe.clients)-1] != "orch test client" {
		t.Fatalf("signals %v, last authorization %q", fe.signals, fe.auth[len(fe.auth)-1])
	}
	fe.mu.Unlock()
	t.Setenv("TEMPORAL_TLS_CERT", "")
	t.Setenv("TEMPORAL_TLS_KEY", "")
	stderr.Reset()
	code = execute([]string{"go", "--db", dbFile, "--tls-cert", certs.ClientCert, id, "A"}, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), "--tls-cert and --tls-key go together") {
		t.Fatalf("a certificate without its key: exit %d: %s", code, stderr.String())
	}
}

// TestRunRecordsTheConnection: what a run records of its connection (for
// orch go, stop and status later) is the TLS files' absolute paths and the
// server name, never the API key; orch-temporal go of such a run connects
// with them, given no flags.
func TestRunRecordsTheConnection(t *testing.T) {
	certs := testtls.New(t)
	fe, addr := startSecuredFrontend(t, certs)
	t.Setenv(APIKeyEnv, testAPIKey)
	cmd := runCmd()
	connectionFlags(cmd.Flags())
	for name, v := range map[string]string{"tls-ca": certs.CA, "tls-cert": certs.ClientCert, "tls-key": certs.ClientKey, "tls-server-name": testtls.ServerName} {
		if err := cmd.Flags().Set(name, v); err != nil {
			t.Fatal(err)
		}
	}
	tr := recordedConnection(cmd, &record.TemporalRun{Address: addr, Namespace: "default", TaskQueue: "orch", WorkflowID: "orch-r2", Path: "c.yaml"})
	if tr.TLSCA != certs.CA || tr.TLSCert != certs.ClientCert || tr.TLSKey != certs.ClientKey || tr.TLSServerName != testtls.ServerName {
		t.Fatalf("recorded %+v", tr)
	}
	dbFile := t.TempDir() + "/orch.db"
	db, err := store.Open(dbFile, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Append(context.Background(), record.Event{RunID: "r2", At: time.Now(), Type: record.EvRunStarted, Data: record.RunStartedData{
		Cuelist: "c", SpecPath: "/p/c.yaml", Cues: []record.CueInfo{{ID: "A", Agents: []string{"a"}}}, Temporal: tr}})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := readAll(dbFile)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(testAPIKey)) {
		t.Fatal("the API key is in the run database")
	}
	var stderr bytes.Buffer
	if code := execute([]string{"stop", "--db", dbFile, "r2"}, &stderr); code != 0 {
		t.Fatalf("orch-temporal stop of the recorded run: exit %d: %s", code, stderr.String())
	}
	fe.mu.Lock()
	defer fe.mu.Unlock()
	if len(fe.signals) != 1 || fe.signals[0] != "orch-r2 orch.stop" || fe.auth[len(fe.auth)-1] != "Bearer "+testAPIKey {
		t.Fatalf("signals %v, authorization %v", fe.signals, fe.auth)
	}
}

// readAll reads the database file and its write-ahead log.
func readAll(dbFile string) ([]byte, error) {
	var all []byte
	for _, p := range []string{dbFile, dbFile + "-wal"} {
		b, err := os.ReadFile(p)
		if err != nil && !os.IsNotExist(err) {
			return nil, err
		}
		all = append(all, b...)
	}
	return all, nil
}
