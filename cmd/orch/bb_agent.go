package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/orch-cli/orch/control"
	"github.com/orch-cli/orch/runner/mcpbridge"
	"github.com/orch-cli/orch/runner/redact"
)

// An agent on a Temporal worker has no run database (ORCH_DB is empty: the
// store is its follower's, on another machine maybe). Its orch bb goes to
// the worker instead: the attempt's MCP endpoint (ORCH_MCP_URL and
// ORCH_MCP_TOKEN, loopback, a token per attempt), whose blackboard tools
// are the run's workflow's orch.bb-write update and orch.bb-read query, as
// a jsonl agent's blackboard.write and blackboard.read: the same conflict
// rule, the same events, the agent as the author.

// agentBoard is the endpoint orch bb uses for run, or nil when the command
// reads a database as usual: inside a Temporal agent (ORCH_ENGINE=temporal,
// ORCH_DB empty), about its own run, without --db. Such an agent with no
// endpoint is refused, saying why.
func agentBoard(f *factory, run string) (*mcpbridge.Client, error) {
	if os.Getenv("ORCH_ENGINE") != "temporal" || os.Getenv("ORCH_DB") != "" || f.flags != nil && f.flags.Changed("db") {
		return nil, nil
	}
	if own := os.Getenv("ORCH_RUN_ID"); own == "" || run != own {
		return nil, nil
	}
	c, err := mcpbridge.ClientFromEnv()
	if err != nil {
		return nil, &control.Error{Kind: control.NotFound, Err: fmt.Errorf(
			"run %s runs on a Temporal worker: this machine has no run database (ORCH_DB is empty) and the worker gave this agent no endpoint (%s and %s are unset: it could not start its MCP endpoint, see the worker's log)",
			run, mcpbridge.URLVar, mcpbridge.TokenVar)}
	}
	return &c, nil
}

// boardValue is a key as the endpoint's blackboard_read gives it.
type boardValue struct {
	Found   bool            `json:"found"`
	Value   json.RawMessage `json:"value"`
	Version int64           `json:"version"`
	Author  string          `json:"author"`
}

func agentBoardRead(ctx context.Context, c *mcpbridge.Client, run, key string) (control.BoardEntry, error) {
	var v boardValue
	if err := c.Call(ctx, "blackboard_read", map[string]any{"key": key}, &v); err != nil {
		return control.BoardEntry{}, err
	}
	if !v.Found {
		return control.BoardEntry{}, &control.Error{Kind: control.Absent, Err: fmt.Errorf("run %s has no blackboard key %q (orch bb ls lists its keys)", run, key)}
	}
	return control.BoardEntry{Key: key, Value: v.Value, Version: v.Version, Author: v.Author}, nil
}

// agentBoardGet is orch bb get through the endpoint.
func agentBoardGet(ctx context.Context, c *mcpbridge.Client, opts *bbGetOptions) error {
	e, err := agentBoardRead(ctx, c, opts.run, opts.key)
	if err != nil {
		return err
	}
	return printBoardEntry(opts, e)
}

// agentBoardSet is orch bb set through the endpoint; the value is masked as
// a write to the database is.
func agentBoardSet(ctx context.Context, c *mcpbridge.Client, opts *bbSetOptions, value json.RawMessage) error {
	value = redact.New(os.Environ(), nil).JSON(value)
	args := map[string]any{"key": opts.key, "value": value}
	if opts.ifVersion != nil {
		args["expected_version"] = *opts.ifVersion
	}
	var w struct {
		Version int64 `json:"version"`
	}
	if err := c.Call(ctx, "blackboard_write", args, &w); err != nil {
		var te *mcpbridge.ToolError
		if errors.As(err, &te) {
			return errors.New(te.Text)
		}
		return err
	}
	if opts.output == "json" {
		return writeJSON(opts.io.out, map[string]any{"key": opts.key, "version": w.Version})
	}
	fmt.Fprintf(opts.io.out, "%s: version %d\n", opts.key, w.Version)
	return nil
}

// agentBoardLs is orch bb ls through the endpoint: the keys, then each
// one's value.
func agentBoardLs(ctx context.Context, c *mcpbridge.Client, opts *bbLsOptions) error {
	var list struct {
		Keys []mcpbridge.BoardKey `json:"keys"`
	}
	if err := c.Call(ctx, "blackboard_list", map[string]any{}, &list); err != nil {
		return err
	}
	slices.SortFunc(list.Keys, func(a, b mcpbridge.BoardKey) int { return strings.Compare(a.Key, b.Key) })
	board := []control.BoardEntry{}
	for _, k := range list.Keys {
		e, err := agentBoardRead(ctx, c, opts.run, k.Key)
		if control.KindOf(err) == control.Absent { // gone meanwhile
			continue
		}
		if err != nil {
			return err
		}
		board = append(board, e)
	}
	if opts.output == "json" {
		return writeJSON(opts.io.out, board)
	}
	if len(board) == 0 {
		fmt.Fprintf(opts.io.out, "the blackboard of run %s is empty\n", opts.run)
		return nil
	}
	tw := tabwriter.NewWriter(opts.io.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tVERSION\tAUTHOR\tVALUE")
	for _, e := range board {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", e.Key, e.Version, e.Author, oneLine(string(e.Value), 60))
	}
	return tw.Flush()
}
