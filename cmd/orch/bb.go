package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/redact"
	"github.com/orch-cli/orch/runner/store"
)

// The blackboard commands work from a shell agent as from a person's shell:
// inside an agent, ORCH_RUN_ID and ORCH_DB (set for every agent) find the
// run and its database, and ORCH_AGENT_ID is the author of a write.

func newBBCmd(io *streams) *cobra.Command {
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
.orch/orch.db from the current directory upwards.`,
		Example: `  orch bb ls
  orch bb get plan
  orch bb set plan '{"steps": 3}'
  orch bb set --run 3f9a note "looks good"`,
	}
	cmd.PersistentFlags().String("run", "", `the run: an id, a unique prefix or "last" (default $ORCH_RUN_ID, else last)`)
	_ = cmd.RegisterFlagCompletionFunc("run", func(c *cobra.Command, _ []string, s string) ([]string, cobra.ShellCompDirective) {
		return completeRuns(c, nil, s)
	})
	cmd.AddCommand(newBBGetCmd(io), newBBSetCmd(io), newBBLsCmd(io))
	return cmd
}

// bbRun opens the database and finds the run of a blackboard command.
func bbRun(cmd *cobra.Command, open func(*cobra.Command) (*store.DB, error)) (*store.DB, string, error) {
	ref, _ := cmd.Flags().GetString("run")
	if ref == "" {
		ref = os.Getenv("ORCH_RUN_ID")
	}
	if ref == "" {
		ref = "last"
	}
	db, err := open(cmd)
	if err != nil {
		return nil, "", usageError(err)
	}
	id, err := resolveRun(cmd.Context(), db, ref)
	if err != nil {
		db.Close()
		return nil, "", err
	}
	return db, id, nil
}

// entryJSON is one blackboard entry in --output json.
type entryJSON struct {
	Key     string          `json:"key"`
	Value   json.RawMessage `json:"value"`
	Version int64           `json:"version"`
	Author  string          `json:"author"`
	At      *string         `json:"at"`
}

func toEntryJSON(e record.BlackboardEntry) entryJSON {
	return entryJSON{Key: e.Key, Value: e.Value, Version: e.Version, Author: e.Author, At: timeJSON(e.At)}
}

func newBBGetCmd(io *streams) *cobra.Command {
	var output string
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
			if err := checkOutput(output); err != nil {
				return err
			}
			db, id, err := bbRun(cmd, openReading)
			if err != nil {
				return err
			}
			defer db.Close()
			e, ok, err := db.BlackboardRead(cmd.Context(), id, args[0])
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("run %s has no blackboard key %q (orch bb ls --run %s lists its keys)", id, args[0], id)
			}
			if output == "json" {
				return writeJSON(io.out, toEntryJSON(e))
			}
			var s string
			if json.Unmarshal(e.Value, &s) == nil {
				fmt.Fprintln(io.out, s)
			} else {
				fmt.Fprintln(io.out, string(e.Value))
			}
			return nil
		},
	}
	outputFlag(cmd, &output, "text", "text or json", textOrJSON)
	return cmd
}

func newBBSetCmd(io *streams) *cobra.Command {
	var output string
	var asString bool
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
			if err := checkOutput(output); err != nil {
				return err
			}
			value, err := bbValue(args[1], asString)
			if err != nil {
				return err
			}
			db, id, err := bbRun(cmd, openExisting)
			if err != nil {
				return err
			}
			defer db.Close()
			if handled, err := handOverRecorded(cmd, io, db, id, []string{"run", "string"}, nil, func(flags []string) []string {
				// VALUE as the JSON orch would store (--string applied), masked as here.
				value = redact.New(os.Environ(), nil).JSON(value)
				return append(append([]string{"bb", "set"}, flags...), "--", id, args[0], string(value))
			}); handled {
				return err
			}
			var ifVersion *int64
			if cmd.Flags().Changed("if-version") {
				if expected < 0 {
					return usageError(fmt.Errorf("--if-version must be 0 or more, not %d", expected))
				}
				ifVersion = &expected
			}
			version, err := bbSet(cmd.Context(), db, id, args[0], value, ifVersion)
			if err != nil {
				return err
			}
			if output == "json" {
				return writeJSON(io.out, map[string]any{"key": args[0], "version": version})
			}
			fmt.Fprintf(io.out, "%s: version %d\n", args[0], version)
			return nil
		},
	}
	outputFlag(cmd, &output, "text", "text or json", textOrJSON)
	cmd.Flags().BoolVar(&asString, "string", false, "store VALUE as a string even if it parses as JSON")
	cmd.Flags().Int64Var(&expected, "if-version", 0, "write only if KEY is at this version (0: only if it does not exist yet)")
	return cmd
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

// bbSet writes one key, as the agent running this command when there is one.
// With ifVersion, only if the key is at that version.
func bbSet(ctx context.Context, db *store.DB, id, key string, value json.RawMessage, ifVersion *int64) (int64, error) {
	state, err := db.RunState(ctx, id)
	if err != nil {
		return 0, err
	}
	if state.Ended() {
		return 0, fmt.Errorf("run %s is %s: its blackboard is kept as the run left it and cannot be written", id, state)
	}
	// orch bb set is a process of its own, often inside an agent: it masks
	// the secrets of its own environment, which an agent inherits from orch
	// (the values of secret-looking names, and the names orch lists in
	// ORCH_SECRETS), as the run's owner masks what it records.
	value = redact.New(os.Environ(), nil).JSON(value)
	put := record.BlackboardPut{Key: key, Value: value, Author: "person", IfVersion: ifVersion}
	if agent := os.Getenv("ORCH_AGENT_ID"); agent != "" {
		put.Author = agent
	}
	if os.Getenv("ORCH_RUN_ID") == id { // the agent's own run: the write is its task's
		put.Cue = os.Getenv("ORCH_CUE_ID")
		put.Attempt, _ = strconv.Atoi(os.Getenv("ORCH_ATTEMPT"))
	}
	written, err := db.BlackboardWriteMany(ctx, id, []record.BlackboardPut{put})
	if err != nil {
		return 0, err
	}
	if w := written[0]; w.Conflict {
		if w.Version == 0 {
			return 0, fmt.Errorf("run %s: blackboard key %q does not exist, not at version %d: nothing written", id, key, *ifVersion)
		}
		return 0, fmt.Errorf("run %s: blackboard key %q is at version %d (by %s), not %d: nothing written (orch bb get %s shows it)",
			id, key, w.Version, w.Author, *ifVersion, key)
	}
	return written[0].Version, nil
}

func newBBLsCmd(io *streams) *cobra.Command {
	var output string
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
			if err := checkOutput(output); err != nil {
				return err
			}
			db, id, err := bbRun(cmd, openReading)
			if err != nil {
				return err
			}
			defer db.Close()
			board, err := db.Blackboard(cmd.Context(), id)
			if err != nil {
				return err
			}
			keys := make([]string, 0, len(board))
			for k := range board {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			if output == "json" {
				out := make([]entryJSON, 0, len(keys))
				for _, k := range keys {
					out = append(out, toEntryJSON(board[k]))
				}
				return writeJSON(io.out, out)
			}
			if len(keys) == 0 {
				fmt.Fprintf(io.out, "the blackboard of run %s is empty\n", id)
				return nil
			}
			tw := tabwriter.NewWriter(io.out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "KEY\tVERSION\tAUTHOR\tAGE\tVALUE")
			for _, k := range keys {
				e := board[k]
				fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", k, e.Version, e.Author, ago(e.At), oneLine(string(e.Value), 60))
			}
			return tw.Flush()
		},
	}
	outputFlag(cmd, &output, "text", "text or json", textOrJSON)
	return cmd
}

// checkOutput accepts the values of --output.
func checkOutput(output string) error {
	if output != "text" && output != "json" {
		return usageError(fmt.Errorf("unknown output %q (want text or json)", output))
	}
	return nil
}
