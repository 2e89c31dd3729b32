package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orch-cli/orch/runner/mcpbridge"
)

// orch ask, orch msg and orch inbox are a shell agent's MCP tools: inside an
// agent orch started, they call the tools of the run's endpoint as the
// agent's attempt (ORCH_MCP_URL, ORCH_MCP_TOKEN), the same requests a
// coding agent makes through MCP and a jsonl agent through the protocol.

func newAskCmd(io *streams) *cobra.Command {
	var complexity string
	var options []string
	cmd := &cobra.Command{
		Use:   "ask QUESTION",
		Short: "Ask the person (or the agent that started yours) a question, from inside an agent",
		Long: `orch ask puts a question to the person running orch, or to the agent that
started yours, as your agent's attempt, and waits for the answer: it is
printed, exit 0. The person sees it as every question (the terminal
prompt, orch status, orch answer, orch serve's inbox).

Exit 1 with the reason when the question closes unanswered
(guardrails.question_timeout) or the attempt ends.`,
		Example: `  orch ask "Which database should the service use?"
  orch ask --complexity deep "Is the migration safe to run twice?"
  answer=$(orch ask --option yes --option no "Ship it?")`,
		Args: argsBetween(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if complexity != "quick" && complexity != "deep" {
				return usageError(fmt.Errorf("--complexity %q: quick or deep", complexity))
			}
			var out struct {
				Answer string `json:"answer"`
			}
			if err := callTool(cmd, "ask", map[string]any{"question": args[0], "complexity": complexity, "options": options}, &out); err != nil {
				return err
			}
			_, err := fmt.Fprintln(io.out, out.Answer)
			return err
		},
	}
	cmd.Flags().StringVar(&complexity, "complexity", "quick", "quick (a short answer) or deep (needs thought)")
	cmd.Flags().StringArrayVar(&options, "option", nil, "an answer to choose from (repeat; none: any answer)")
	return cmd
}

func newMsgCmd(io *streams) *cobra.Command {
	var private, asString bool
	cmd := &cobra.Command{
		Use:   "msg TO BODY",
		Short: "Send a message to another agent of the run, from inside an agent",
		Long: `orch msg sends BODY to another task of the run, by agent id or task id, as
your agent's attempt: a sibling directly, any other task through their
nearest common ancestor. BODY is stored as JSON when it parses as JSON,
else as a string (--string: always a string).

Exit 1 with the reason when it cannot be delivered (the recipient ended).`,
		Example: `  orch msg reviewer "api.go is ready for review"
  orch msg tester '{"package": "./runner", "focus": "retries"}'
  orch msg --private lead "I am blocked on the schema"`,
		Args: argsBetween(2, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			body, err := bbValue(args[1], asString)
			if err != nil {
				return err
			}
			return callTool(cmd, "send_message", map[string]any{"to": args[0], "body": body, "private": private}, nil)
		},
	}
	cmd.Flags().BoolVar(&private, "private", false, "only the recipient sees the body")
	cmd.Flags().BoolVar(&asString, "string", false, "send BODY as a string even if it parses as JSON")
	return cmd
}

func newInboxCmd(io *streams) *cobra.Command {
	var wait float64
	var output string
	cmd := &cobra.Command{
		Use:   "inbox",
		Short: "Take what was delivered to your agent, from inside an agent",
		Long: `orch inbox prints what was delivered to your agent's task since the last
call (by it or by the agent's own MCP client): messages, broadcasts,
changes of the blackboard keys it watches, announcements of the tasks it
spawned. Each is a line: its message type and its body as JSON, oldest
first (--output json: a JSON array of {type, body}). With --wait, when
nothing is waiting, it waits up to that many seconds for something.`,
		Example: `  orch inbox
  orch inbox --wait 60
  orch inbox --output json | jq -r '.[].body.body'`,
		Args: argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			if wait < 0 || wait > mcpbridge.MaxInboxWait {
				return usageError(fmt.Errorf("--wait %g: 0 to %d seconds", wait, mcpbridge.MaxInboxWait))
			}
			var out struct {
				Notices []mcpbridge.Notice `json:"notices"`
			}
			if err := callTool(cmd, "inbox", map[string]any{"wait_seconds": wait}, &out); err != nil {
				return err
			}
			if output == "json" {
				return writeJSON(io.out, out.Notices)
			}
			var b strings.Builder
			for _, n := range out.Notices {
				body, _ := json.Marshal(n.Body)
				fmt.Fprintf(&b, "%s %s\n", n.Type, body)
			}
			_, err := fmt.Fprint(io.out, b.String())
			return err
		},
	}
	cmd.Flags().Float64Var(&wait, "wait", 0, "when nothing is waiting, wait up to this many seconds")
	outputFlag(cmd, &output, "text", "text or json", textOrJSON)
	return cmd
}

// callTool calls a tool as the attempt this command runs in.
func callTool(cmd *cobra.Command, tool string, args, out any) error {
	c, err := mcpbridge.ClientFromEnv()
	if err != nil {
		return err
	}
	return c.Call(cmd.Context(), tool, args, out)
}
