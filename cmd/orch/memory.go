package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/orch-cli/orch/control"
	"github.com/orch-cli/orch/runner/store"
)

func newMemoryCmd(f *factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "memory",
		Short: "List and search what agents kept across runs",
		Long: `Memory is what agents choose to keep across runs (memory.write): items with
a key, a text and tags, in the run database, whichever run wrote them. A
later write of a key is its next version: ls and search show the latest,
orch memory show KEY --history every one kept. orch memory rm forgets a key
and its history.`,
		Example: `  orch memory ls
  orch memory search database migration
  orch memory search 'deploy*' --output json
  orch memory show lesson --history
  orch memory rm lesson`,
	}
	cmd.AddCommand(newMemoryLsCmd(f, nil), newMemorySearchCmd(f, nil), newMemoryShowCmd(f, nil), newMemoryRmCmd(f, nil))
	return cmd
}

type memoryOptions struct {
	io         *streams
	controller func() (*control.Controller, error)
	query      string // search: the words of QUERY; show, rm: KEY
	output     string
	limit      int
	history    bool // show: every version
}

func newMemoryLsCmd(f *factory, runF func(*memoryOptions) error) *cobra.Command {
	opts := &memoryOptions{io: f.io, controller: f.Controller}
	cmd := &cobra.Command{
		Use:   "ls",
		Short: "List memory items, newest first",
		Long: `List memory items, newest first: key, age, the agent and run that wrote
it, tags and text (shortened). With --output json: a list of
{key, text, tags, agent, run_id, at, version, author}.`,
		Example: `  orch memory ls
  orch memory ls --limit 100 --output json`,
		Args: argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return memoryLsRun(cmd.Context(), opts)
		},
	}
	outputFlag(cmd, &opts.output, "text", "text or json", textOrJSON)
	cmd.Flags().IntVar(&opts.limit, "limit", store.DefaultMemoryLimit, "items to list")
	return cmd
}

func memoryLsRun(ctx context.Context, opts *memoryOptions) error {
	if err := checkOutput(opts.output); err != nil {
		return err
	}
	ctl, err := opts.controller()
	if err != nil {
		return err
	}
	items, total, err := ctl.MemoryList(ctx, opts.limit)
	if errors.Is(err, control.ErrNoDatabase) {
		return printMemory(opts.io, nil, 0, opts.output, "memory is empty")
	}
	if err != nil {
		return err
	}
	return printMemory(opts.io, items, total, opts.output, "memory is empty")
}

func newMemorySearchCmd(f *factory, runF func(*memoryOptions) error) *cobra.Command {
	opts := &memoryOptions{io: f.io, controller: f.Controller}
	cmd := &cobra.Command{
		Use:   "search QUERY...",
		Short: "Search memory (full text), best match first",
		Long: `Find the memory items whose key, text or tags hold every word of QUERY,
best match first (BM25; a word in the key or the tags counts more than one
in the text). Words are matched whole, with their endings (deploy finds
deploying), case and accents ignored; a word ending in * matches as a
prefix. Quotes, AND, OR, NOT and other search syntax are plain words.`,
		Example: `  orch memory search postgres
  orch memory search flaky test --limit 5
  orch memory search 'migrat*' --output json`,
		Args: argsBetween(1, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.query = strings.Join(args, " ")
			if runF != nil {
				return runF(opts)
			}
			return memorySearchRun(cmd.Context(), opts)
		},
	}
	outputFlag(cmd, &opts.output, "text", "text or json", textOrJSON)
	cmd.Flags().IntVar(&opts.limit, "limit", store.DefaultMemoryLimit, "items to print at most")
	return cmd
}

func memorySearchRun(ctx context.Context, opts *memoryOptions) error {
	if err := checkOutput(opts.output); err != nil {
		return err
	}
	ctl, err := opts.controller()
	if err != nil {
		return err
	}
	items, err := ctl.MemorySearch(ctx, opts.query, opts.limit)
	if errors.Is(err, control.ErrNoDatabase) {
		return printMemory(opts.io, nil, -1, opts.output, "nothing found: memory is empty")
	}
	if err != nil {
		return err
	}
	return printMemory(opts.io, items, -1, opts.output, fmt.Sprintf("nothing in memory matches %q", opts.query))
}

// printMemory prints items; total >= 0 is how many memory holds (a list
// that shows fewer says so), none what to say when there are no items.
func printMemory(io *streams, items []control.MemoryItem, total int, output, none string) error {
	if output == "json" {
		if items == nil {
			items = []control.MemoryItem{}
		}
		return writeJSON(io.out, items)
	}
	if len(items) == 0 {
		fmt.Fprintln(io.out, none)
		return nil
	}
	tw := tabwriter.NewWriter(io.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tAGE\tAGENT\tRUN\tTAGS\tTEXT")
	for _, it := range items {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", it.Key, ago(it.Item.At), dash(it.Agent), dash(it.RunID),
			dash(strings.Join(it.Tags, ",")), oneLine(it.Text, 70))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if total > len(items) {
		fmt.Fprintf(io.out, "... and %d more (--limit)\n", total-len(items))
	}
	return nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
