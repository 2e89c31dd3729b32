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
	var noToken bool
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

A token is generated at each start (or given with --token) and is part of
the URL printed: open that URL, and the page sends it with every request,
as "Authorization: Bearer TOKEN" ("?token=TOKEN" also does). On loopback
(the default) it is needed for every request that changes anything (answer,
go, ack, stop, retry: a local port is no boundary between users), and
--no-token goes without; on any other address (--addr) every request needs
it. Requests that change anything must also come from the same origin (no
cross-site forms).

A client's connections are bounded: a request header must come within 10s
and a whole request within 30s, an idle connection is closed after 30s, and
at most 4096 connections are open (2048 from one address): past that, a new
one takes the place of the one that has waited longest without a request.`,
		Example: `  orch serve
  orch serve --addr 0.0.0.0:7070 --token "$(cat token)"
  orch serve --no-token          # loopback only: anyone on this machine may act`,
		Args: argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd, io, addr, token, noToken)
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:7070", "address to listen on (host:port)")
	cmd.Flags().StringVar(&token, "token", "", "the token requests must carry (default: one generated at each start, in the URL printed)")
	cmd.Flags().BoolVar(&noToken, "no-token", false, "on loopback, take requests that change things without a token")
	return cmd
}

func runServe(cmd *cobra.Command, io *streams, addr, token string, noToken bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usageError(fmt.Errorf("--addr %q: %v (want host:port, e.g. 127.0.0.1:7070)", addr, err))
	}
	loopback := isLoopback(host)
	switch {
	case noToken && !loopback:
		return usageError(fmt.Errorf("--no-token: only on loopback; on %s every request needs a token", addr))
	case noToken && token != "":
		return usageError(errors.New("--no-token and --token: give one of them"))
	}
	generated := false
	if token == "" && !noToken {
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
	s.openReads = loopback && token != ""
	limits := newConnLimits(ln, maxServeConns(), max(maxServeConns()/2, 1))
	srv := &http.Server{Handler: s.handler(), ConnState: limits.ConnState}
	serveTimeouts(srv)
	url := "http://" + ln.Addr().String() + "/"
	if token != "" {
		url += "?token=" + token
	}
	fmt.Fprintf(io.out, "orch: serving %s at %s\n", db.Path(), url)
	if generated && !loopback {
		fmt.Fprintf(io.out, "orch: token (printed this once): %s\n", token)
	}
	ctx := cmd.Context() // ended by SIGINT and SIGTERM (main)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(limits) }()
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
