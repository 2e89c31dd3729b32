package main

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/spf13/cobra"

	"github.com/orch-cli/orch/control"
	"github.com/orch-cli/orch/serve"
)

type serveOptions struct {
	io         *streams
	controller func() (*control.Controller, error)
	addr       string
	token      string
	noToken    bool
}

func newServeCmd(f *factory, runF func(*serveOptions) error) *cobra.Command {
	opts := &serveOptions{io: f.io, controller: f.Controller}
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
			if runF != nil {
				return runF(opts)
			}
			return runServe(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.addr, "addr", "127.0.0.1:7070", "address to listen on (host:port)")
	cmd.Flags().StringVar(&opts.token, "token", "", "the token requests must carry (default: one generated at each start, in the URL printed)")
	cmd.Flags().BoolVar(&opts.noToken, "no-token", false, "on loopback, take requests that change things without a token")
	return cmd
}

// runServe checks the flags and serves until ctx ends (SIGINT, SIGTERM:
// main).
func runServe(ctx context.Context, opts *serveOptions) error {
	host, _, err := net.SplitHostPort(opts.addr)
	if err != nil {
		return usageError(fmt.Errorf("--addr %q: %v (want host:port, e.g. 127.0.0.1:7070)", opts.addr, err))
	}
	loopback := serve.IsLoopback(host)
	switch {
	case opts.noToken && !loopback:
		return usageError(fmt.Errorf("--no-token: only on loopback; on %s every request needs a token", opts.addr))
	case opts.noToken && opts.token != "":
		return usageError(errors.New("--no-token and --token: give one of them"))
	}
	cfg := serve.Config{Addr: opts.addr, Token: opts.token, Version: versionString()}
	if cfg.Token == "" && !opts.noToken {
		cfg.Token, cfg.Generated = serve.NewToken(), true
	}
	ctl, err := opts.controller()
	if err != nil {
		return err
	}
	return serve.Run(ctx, cfg, ctl, opts.io.out)
}
