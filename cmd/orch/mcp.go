package main

import (
	"context"
	"errors"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/orch-cli/orch/runner/mcpbridge"
)

func newMCPCmd(io *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "orch's collaboration tools over MCP, for the agents orch starts",
		Long: `Every agent orch starts gets an MCP server named orch whose tools act as
its task: the blackboard, questions for the person, messages, handoffs,
spawns, status and memory (see "MCP tools for agents" in the README).`,
		Example: `  orch mcp agent    # inside an agent: orch's tools on stdio`,
	}
	cmd.AddCommand(newMCPAgentCmd(io))
	return cmd
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
