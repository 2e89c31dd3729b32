package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/orch-cli/orch/control"
	"github.com/orch-cli/orch/runner/mcpbridge"
)

// The blackboard commands work from a shell agent as from a person's shell:
// inside an agent, ORCH_RUN_ID and ORCH_DB (set for every agent) find the
// run and its database, and ORCH_AGENT_ID is the author of a write.

func newBBCmd(f *factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bb",
		Short: "Read and write a run's blackboard",
		Long: `The blackboard is a run's shared scratch space: keys with JSON values,
each write a new version with its author and time (and a blackboard/updated
event). Agents read and write it through the protocol; these commands do
the same from a shell, a plain agent's script included.

The run is --run (an id, a unique prefix or "last"); without it, the run in
ORCH_RUN_ID (set for every agent), else the most recent run. The database
is --db, else ORCH_DB (also set for every agent), else the nearest
.orch/orch.db from the current directory upwards.

An agent on a Temporal worker has no database (ORCH_DB is empty there):
its orch bb reads and writes its own run through its worker's endpoint
(ORCH_MCP_URL, ORCH_MCP_TOKEN), as the agent, with the same versions and
conflicts.`,
		Example: `  orch bb ls
  orch bb get plan
  orch bb set plan '{"steps": 3}'
  orch bb set --run 3f9a note "looks good"`,
	}
	var run string
	cmd.PersistentFlags().StringVar(&run, "run", "", `the run: an id, a unique prefix or "last" (default $ORCH_RUN_ID, else last)`)
	_ = cmd.RegisterFlagCompletionFunc("run", func(c *cobra.Command, _ []string, s string) ([]string, cobra.ShellCompDirective) {
		return completeRuns(f)(c, nil, s)
	})
	bbRun := func() string { return bbRunRef(run) }
	cmd.AddCommand(newBBGetCmd(f, bbRun, nil), newBBSetCmd(f, bbRun, nil), newBBLsCmd(f, bbRun, nil))
	return cmd
}

// bbRunRef is the run of a blackboard command: --run, else the run in
// ORCH_RUN_ID (inside an agent), else the most recent run.
func bbRunRef(flag string) string {
	if flag != "" {
		return flag
	}
	if env := os.Getenv("ORCH_RUN_ID"); env != "" {
		return env
	}
	return "last"
}

type bbGetOptions struct {
	io         *streams
	controller func() (*control.Controller, error)
	endpoint   func(run string) (*mcpbridge.Client, error) // agentBoard
	run        string
	key        string
	output     string
}

func newBBGetCmd(f *factory, run func() string, runF func(*bbGetOptions) error) *cobra.Command {
	opts := &bbGetOptions{io: f.io, controller: f.Controller, endpoint: func(run string) (*mcpbridge.Client, error) { return agentBoard(f, run) }}
	cmd := &cobra.Command{
		Use:   "get KEY",
		Short: "Print the latest value of a blackboard key",
		Long: `Print the latest value of KEY: a string as it is (no quotes), any other
value as JSON. With --output json: {key, value, version, author, at}.
A key the board does not have exits 1.`,
		Example: `  orch bb get plan
  orch bb get --run last plan --output json | jq .version`,
		Args: argsBetween(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.run, opts.key = run(), args[0]
			if runF != nil {
				return runF(opts)
			}
			return bbGetRun(cmd.Context(), opts)
		},
	}
	outputFlag(cmd, &opts.output, "text", "text or json", textOrJSON)
	return cmd
}

func bbGetRun(ctx context.Context, opts *bbGetOptions) error {
	if err := checkOutput(opts.output); err != nil {
		return err
	}
	if c, err := opts.endpoint(opts.run); c != nil || err != nil {
		if err != nil {
			return err
		}
		return agentBoardGet(ctx, c, opts)
	}
	ctl, err := opts.controller()
	if err != nil {
		return err
	}
	e, err := ctl.BoardGet(ctx, opts.run, opts.key)
	if err != nil {
		return err
	}
	return printBoardEntry(opts, *e)
}

// printBoardEntry prints what orch bb get read: a string as it is, any
// other value as JSON; with --output json, the whole entry.
func printBoardEntry(opts *bbGetOptions, e control.BoardEntry) error {
	if opts.output == "json" {
		return writeJSON(opts.io.out, e)
	}
	var s string
	if json.Unmarshal(e.Value, &s) == nil {
		fmt.Fprintln(opts.io.out, s)
	} else {
		fmt.Fprintln(opts.io.out, string(e.Value))
	}
	return nil
}

type bbSetOptions struct {
	io         *streams
	controller func() (*control.Controller, error)
	endpoint   func(run string) (*mcpbridge.Client, error) // agentBoard
	run        string
	key, value string
	output     string
	asString   bool
	ifVersion  *int64   // --if-version, when given
	unhandled  []string // flags orch-temporal does not take
}

func newBBSetCmd(f *factory, run func() string, runF func(*bbSetOptions) error) *cobra.Command {
	opts := &bbSetOptions{io: f.io, controller: f.Controller, endpoint: func(run string) (*mcpbridge.Client, error) { return agentBoard(f, run) }}
	var expected int64
	cmd := &cobra.Command{
		Use:   "set KEY VALUE",
		Short: "Write a new version of a blackboard key",
		Long: `Write VALUE as the new version of KEY and print the version. VALUE is JSON
when it parses as JSON (42, true, {"a": 1}, "quoted"), else a string;
--string always stores a string. The author is ORCH_AGENT_ID when set
(inside an agent), else "person".

--if-version N writes only if KEY is at version N (0: only if it does not
exist yet): read it, change it, write it back with the version read, and
a write by someone else in between is not overwritten. When KEY has moved
on, nothing is written and orch bb set exits 1 naming the current version
and its author.

A run that is running, paused or interrupted can be written; a completed,
failed or stopped run's board is kept as the run left it, and writing it is
refused.`,
		Example: `  orch bb set plan '{"steps": 3}'
  orch bb set --string version 1.10
  orch bb set --run 3f9a approved true
  orch bb set --if-version 2 plan '{"steps": 4}'`,
		Args: argsBetween(2, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.run, opts.key, opts.value = run(), args[0], args[1]
			if cmd.Flags().Changed("if-version") {
				opts.ifVersion = &expected
			}
			opts.unhandled = unhandledFlags(cmd.Flags(), "run", "string")
			if runF != nil {
				return runF(opts)
			}
			return bbSetRun(cmd.Context(), opts)
		},
	}
	outputFlag(cmd, &opts.output, "text", "text or json", textOrJSON)
	cmd.Flags().BoolVar(&opts.asString, "string", false, "store VALUE as a string even if it parses as JSON")
	cmd.Flags().Int64Var(&expected, "if-version", 0, "write only if KEY is at this version (0: only if it does not exist yet)")
	return cmd
}

func bbSetRun(ctx context.Context, opts *bbSetOptions) error {
	if err := checkOutput(opts.output); err != nil {
		return err
	}
	value, err := bbValue(opts.value, opts.asString)
	if err != nil {
		return err
	}
	if v := opts.ifVersion; v != nil && *v < 0 {
		return usageError(fmt.Errorf("--if-version must be 0 or more, not %d", *v))
	}
	if c, err := opts.endpoint(opts.run); c != nil || err != nil {
		if err != nil {
			return err
		}
		return agentBoardSet(ctx, c, opts, value)
	}
	ctl, err := opts.controller()
	if err != nil {
		return err
	}
	w, err := ctl.BoardSet(ctx, control.BoardSetRequest{Run: opts.run, Key: opts.key, Value: value, IfVersion: opts.ifVersion, Unhandled: opts.unhandled})
	if err != nil {
		return err
	}
	if w.Temporal { // handed over to orch-temporal, which said what it did
		printMessage(opts.io, w.Message)
		return nil
	}
	if opts.output == "json" {
		return writeJSON(opts.io.out, map[string]any{"key": opts.key, "version": w.Version})
	}
	fmt.Fprintf(opts.io.out, "%s: version %d\n", opts.key, w.Version)
	return nil
}

// bbValue is the JSON to store for VALUE.
func bbValue(arg string, asString bool) (json.RawMessage, error) {
	if !asString && json.Valid([]byte(arg)) {
		var b bytes.Buffer
		if err := json.Compact(&b, []byte(arg)); err == nil {
			return b.Bytes(), nil
		}
	}
	return json.Marshal(arg) // a Go string always marshals (invalid UTF-8 becomes U+FFFD)
}

type bbLsOptions struct {
	io         *streams
	controller func() (*control.Controller, error)
	endpoint   func(run string) (*mcpbridge.Client, error) // agentBoard
	run        string
	output     string
}

func newBBLsCmd(f *factory, run func() string, runF func(*bbLsOptions) error) *cobra.Command {
	opts := &bbLsOptions{io: f.io, controller: f.Controller, endpoint: func(run string) (*mcpbridge.Client, error) { return agentBoard(f, run) }}
	cmd := &cobra.Command{
		Use:   "ls",
		Short: "List a run's blackboard keys with their latest versions",
		Long: `List every key of the run's blackboard, sorted: its latest version, author,
age and value (shortened; orch bb get prints it whole). With --output json:
a list of {key, value, version, author, at}.`,
		Example: `  orch bb ls
  orch bb ls --run 3f9a --output json`,
		Args: argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.run = run()
			if runF != nil {
				return runF(opts)
			}
			return bbLsRun(cmd.Context(), opts)
		},
	}
	outputFlag(cmd, &opts.output, "text", "text or json", textOrJSON)
	return cmd
}

func bbLsRun(ctx context.Context, opts *bbLsOptions) error {
	if err := checkOutput(opts.output); err != nil {
		return err
	}
	if c, err := opts.endpoint(opts.run); c != nil || err != nil {
		if err != nil {
			return err
		}
		return agentBoardLs(ctx, c, opts)
	}
	ctl, err := opts.controller()
	if err != nil {
		return err
	}
	board, id, err := ctl.Board(ctx, opts.run)
	if err != nil {
		return err
	}
	if opts.output == "json" {
		return writeJSON(opts.io.out, board)
	}
	if len(board) == 0 {
		fmt.Fprintf(opts.io.out, "the blackboard of run %s is empty\n", id)
		return nil
	}
	tw := tabwriter.NewWriter(opts.io.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tVERSION\tAUTHOR\tAGE\tVALUE")
	for _, e := range board {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", e.Key, e.Version, e.Author, ago(e.Entry.At), oneLine(string(e.Value), 60))
	}
	return tw.Flush()
}

// checkOutput accepts the values of --output.
func checkOutput(output string) error {
	if output != "text" && output != "json" {
		return usageError(fmt.Errorf("unknown output %q (want text or json)", output))
	}
	return nil
}
