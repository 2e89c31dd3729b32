package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/orch-cli/orch/control"
	"github.com/orch-cli/orch/mcpserver"
	"github.com/orch-cli/orch/runner/mcpbridge"
	"github.com/orch-cli/orch/runner/store"
)

type mcpOptions struct {
	io         *streams
	controller func() (*control.Controller, error)
	root       string
}

func newMCPCmd(f *factory, runF func(*mcpOptions) error) *cobra.Command {
	opts := &mcpOptions{io: f.io, controller: f.Controller}
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve orch over MCP on stdio, for a coding agent that drives it",
		Long: `orch mcp is an MCP server on stdio through which a coding agent (Claude
Code, Codex, Gemini, an ACP client) drives orch: its tools validate and plan
specs (validate, plan, schema), start runs in the background (run), follow
them (status, events, logs, wait) and act on them (answer, go, ack, stop,
retry, resume, blackboard_get, blackboard_set); each returns the JSON the
matching command prints with --output json, and an error is a tool error
with the command's message. Its resources are the runs (orch://runs,
orch://runs/ID, which a client may subscribe to) and the schemas
(orch://schemas/KIND). See "Driving orch from a coding agent" in the README.

It reads and acts on the database orch status would find (--db, ORCH_DB);
paths the tools take are relative to --root (default: the working
directory) and must stay inside it. orch serve offers the same server as
streamable HTTP at /mcp.

Every agent orch starts gets another MCP server, with the tools of its
task: orch mcp agent is its stdio form (see "MCP tools for agents").`,
		Example: `  claude mcp add orch -- orch mcp
  codex mcp add orch -- orch mcp
  orch mcp --root ~/src/project    # paths relative to the project
  orch mcp agent                   # inside an agent: its task's tools on stdio`,
		Args: argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := projectDB(f, opts.root); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runMCP(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.root, "root", "", "the project root: tools' paths are relative to it and stay inside it (default: the working directory)")
	cmd.AddCommand(newMCPAgentCmd(f.io))
	return cmd
}

// projectDB makes the project's database (the nearest .orch/ from root
// up, else root/.orch/orch.db) the one every tool uses, unless one is
// named: so that a run the run tool starts, wherever its cuelist is, is
// the one status then reads.
func projectDB(f *factory, root string) error {
	if root == "" {
		root = "."
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return usageError(fmt.Errorf("--root: %w", err))
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return usageError(fmt.Errorf("--root %s: not a directory", root))
	}
	dir, ok := store.FindProjectDir(abs)
	if !ok {
		dir = abs
	}
	f.defaultDB = filepath.Join(dir, store.DefaultPath())
	return nil
}

// runMCP serves orch's tools on stdio until the client closes its end or
// ctx ends (a signal).
func runMCP(ctx context.Context, opts *mcpOptions) error {
	ctl, err := opts.controller()
	if err != nil {
		return err
	}
	ctl.HandOverIO = nil // stdout is the protocol's: orch-temporal's output becomes the tool's result
	s, err := mcpserver.New(mcpserver.Options{Control: ctl, Root: opts.root, Version: versionString()})
	if err != nil {
		return err
	}
	err = s.Run(ctx, &mcp.IOTransport{Reader: readCloser{opts.io.in}, Writer: writeCloser{opts.io.out}})
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		return nil // the client left, or a signal stopped orch
	}
	return err
}

func newMCPAgentCmd(io *streams) *cobra.Command {
	return &cobra.Command{
		Use:   "agent",
		Short: "Serve orch's MCP tools on stdio, for an agent that takes only stdio servers",
		Long: `orch mcp agent is the stdio form of the MCP server named orch: an agent
that takes only stdio MCP servers starts it, and it relays every message to
the run's endpoint as the agent's attempt. It finds the endpoint and the
attempt's token in ORCH_MCP_URL and ORCH_MCP_TOKEN, which orch sets for
every agent it starts; orch configures it for such agents itself.

It ends when the agent closes its stdin (exit 0), or with exit 1 when the
attempt has ended (its token is refused) or the run's endpoint is gone.`,
		Example: `  # what an agent's MCP configuration holds (orch writes it):
  {"mcpServers": {"orch": {"command": "orch", "args": ["mcp", "agent"]}}}`,
		Args: argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			err := mcpbridge.Proxy(cmd.Context(), readCloser{io.in}, writeCloser{io.out},
				os.Getenv(mcpbridge.URLVar), os.Getenv(mcpbridge.TokenVar))
			if errors.Is(err, context.Canceled) {
				return nil // stopped by a signal: the agent is ending
			}
			return err
		},
	}
}

// readCloser and writeCloser give stdio the Close the MCP transport calls;
// orch's own streams stay open for its error message.
type readCloser struct{ io.Reader }

func (readCloser) Close() error { return nil }

type writeCloser struct{ io.Writer }

func (writeCloser) Close() error { return nil }
