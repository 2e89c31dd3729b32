package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

func newMemoryShowCmd(f *factory, runF func(*memoryOptions) error) *cobra.Command {
	opts := &memoryOptions{io: f.io, controller: f.Controller}
	cmd := &cobra.Command{
		Use:   "show KEY",
		Short: "Print a memory item, or every version of it kept",
		Long: `Print the latest version of memory item KEY: its version, who wrote it in
which run, when, its tags and its whole text. With --history, every version
kept, newest first (a rewrite of a key keeps the one before). With --output
json: a list of {key, text, tags, agent, run_id, at, version, author}, of
one item without --history. A key memory does not have exits 1.`,
		Example: `  orch memory show lesson
  orch memory show lesson --history
  orch memory show lesson --history --output json`,
		Args: argsBetween(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.query = args[0]
			if runF != nil {
				return runF(opts)
			}
			return memoryShowRun(cmd.Context(), opts)
		},
	}
	outputFlag(cmd, &opts.output, "text", "text or json", textOrJSON)
	cmd.Flags().BoolVar(&opts.history, "history", false, "every version kept, newest first")
	return cmd
}

func memoryShowRun(ctx context.Context, opts *memoryOptions) error {
	if err := checkOutput(opts.output); err != nil {
		return err
	}
	ctl, err := opts.controller()
	if err != nil {
		return err
	}
	items, err := ctl.MemoryHistory(ctx, opts.query)
	if err != nil {
		return err
	}
	if !opts.history {
		items = items[:1]
	}
	if opts.output == "json" {
		return printMemory(opts.io, items, -1, opts.output, "")
	}
	tw := tabwriter.NewWriter(opts.io.out, 0, 0, 2, ' ', 0)
	for i, it := range items {
		if i > 0 {
			fmt.Fprintln(tw)
		}
		fmt.Fprintf(tw, "%s version %d\tby %s in run %s, %s\n", it.Key, it.Version, dash(it.Agent), dash(it.RunID), ago(it.Item.At))
		if len(it.Tags) > 0 {
			fmt.Fprintf(tw, "tags: %s\n", strings.Join(it.Tags, ", "))
		}
		fmt.Fprintln(tw, it.Text)
	}
	return tw.Flush()
}

func newMemoryRmCmd(f *factory, runF func(*memoryOptions) error) *cobra.Command {
	opts := &memoryOptions{io: f.io, controller: f.Controller}
	cmd := &cobra.Command{
		Use:   "rm KEY",
		Short: "Forget a memory item and its history",
		Long: `Forget memory item KEY, every version of it. A key memory does not have
exits 1 (nothing is changed).`,
		Example: `  orch memory rm lesson`,
		Args:    argsBetween(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.query = args[0]
			if runF != nil {
				return runF(opts)
			}
			return memoryRmRun(cmd.Context(), opts)
		},
	}
	return cmd
}

func memoryRmRun(ctx context.Context, opts *memoryOptions) error {
	ctl, err := opts.controller()
	if err != nil {
		return err
	}
	if err := ctl.MemoryForget(ctx, opts.query); err != nil {
		return err
	}
	fmt.Fprintf(opts.io.out, "forgot memory item %s\n", opts.query)
	return nil
}
