package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"
)

func newServeCmd(io *streams) *cobra.Command {
	var addr, token string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the run database over HTTP: a JSON API, live events, a page",
		Long: `Serve the run database (found as orch status finds it) over HTTP: a JSON
API under /api/ (runs, a run, its events, logs and blackboard, the inbox of
what waits for a person; answer, go, ack, stop, retry) and Server-Sent
Events that follow the run list, the inbox and a run's event log (one
stream: /api/stream?run=ID), as any process writes them. It reads the
database read-only; answer, go, ack and stop open it for writing only for
the time of the request; retry, and go on a paused run, start orch retry
or orch go in the background.

It listens on loopback unless --addr names another address; then every
request needs a token (--token, or one generated and printed once), sent as
"Authorization: Bearer TOKEN" or "?token=TOKEN". Requests that change
anything must also come from the same origin (no cross-site forms).`,
		Example: `  orch serve
  orch serve --addr 0.0.0.0:7070 --token "$(cat token)"`,
		Args: argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd, io, addr, token)
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:7070", "address to listen on (host:port)")
	cmd.Flags().StringVar(&token, "token", "", "token every request must carry (required, or generated, off loopback)")
	return cmd
}

func runServe(cmd *cobra.Command, io *streams, addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usageError(fmt.Errorf("--addr %q: %v (want host:port, e.g. 127.0.0.1:7070)", addr, err))
	}
	generated := false
	if token == "" && !isLoopback(host) {
		token, generated = newToken(), true
	}
	db, err := openReading(cmd)
	if err != nil {
		return openFailed(err)
	}
	defer db.Close()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	s := newServer(cmd, db, token)
	srv := &http.Server{Handler: s.handler(), ReadHeaderTimeout: 10 * time.Second}
	url := "http://" + ln.Addr().String() + "/"
	if token != "" {
		url += "?token=" + token
	}
	fmt.Fprintf(io.out, "orch: serving %s at %s\n", db.Path(), url)
	if generated {
		fmt.Fprintf(io.out, "orch: token (printed this once): %s\n", token)
	}
	ctx := cmd.Context() // ended by SIGINT and SIGTERM (main)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	s.closing()
	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutCtx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// isLoopback says whether host (a name or an address) is this machine only.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func newToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
