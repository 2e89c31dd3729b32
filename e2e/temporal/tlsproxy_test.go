//go:build temporal_e2e && linux

package temporal

import (
	"context"
	"io"
	"net"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/orch-cli/orch/internal/testtls"
)

// securedCluster is a Temporal frontend as a secured cluster has it: a
// gRPC proxy that terminates mTLS (a client certificate signed by its CA is
// required) and refuses every call without "authorization: Bearer KEY",
// in front of a plain dev server.
type securedCluster struct {
	addr  string
	certs *testtls.Files
	key   string
	mu    sync.Mutex
	calls int
	bad   []string // methods called without the key
}

func startSecuredCluster(t *testing.T, backend, key string) *securedCluster {
	t.Helper()
	s := &securedCluster{certs: testtls.New(t), key: key}
	conn, err := grpc.NewClient(backend, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	srv := grpc.NewServer(grpc.Creds(credentials.NewTLS(s.certs.ServerConfig(t))), grpc.ForceServerCodec(rawCodec{}),
		grpc.UnknownServiceHandler(func(_ any, ss grpc.ServerStream) error { return s.forward(conn, ss) }))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)
	s.addr = l.Addr().String()
	return s
}

// forward passes one call (any kind of stream) to the backend, frame by
// frame, once its key is checked.
func (s *securedCluster) forward(conn *grpc.ClientConn, ss grpc.ServerStream) error {
	method, _ := grpc.MethodFromServerStream(ss)
	md, _ := metadata.FromIncomingContext(ss.Context())
	s.mu.Lock()
	s.calls++
	ok := strings.Join(md.Get("authorization"), ",") == "Bearer "+s.key
	if !ok {
		s.bad = append(s.bad, method)
	}
	s.mu.Unlock()
	if !ok {
		return status.Error(codes.Unauthenticated, "no valid API key")
	}
	out := metadata.MD{}
	for k, v := range md {
		if !strings.HasPrefix(k, ":") && k != "content-type" && k != "user-agent" && !strings.HasPrefix(k, "grpc-") {
			out[k] = v
		}
	}
	ctx, cancel := context.WithCancel(metadata.NewOutgoingContext(ss.Context(), out))
	defer cancel()
	cs, err := conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, method, grpc.ForceCodec(rawCodec{}))
	if err != nil {
		return err
	}
	go func() {
		for {
			f := &frame{}
			if err := ss.RecvMsg(f); err != nil {
				_ = cs.CloseSend()
				return
			}
			if err := cs.SendMsg(f); err != nil {
				return
			}
		}
	}()
	if h, err := cs.Header(); err == nil {
		_ = ss.SendHeader(h)
	}
	for {
		f := &frame{}
		if err := cs.RecvMsg(f); err != nil {
			ss.SetTrailer(cs.Trailer())
			if err == io.EOF {
				return nil
			}
			return err
		}
		if err := ss.SendMsg(f); err != nil {
			return err
		}
	}
}

// rawCodec passes messages through as the bytes they are.
type rawCodec struct{}

type frame struct{ b []byte }

func (rawCodec) Marshal(v any) ([]byte, error) { return v.(*frame).b, nil }
func (rawCodec) Unmarshal(data []byte, v any) error {
	v.(*frame).b = append([]byte(nil), data...)
	return nil
}
func (rawCodec) Name() string { return "proto" }
