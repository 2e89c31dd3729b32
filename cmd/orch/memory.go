package main

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

func newMemoryCmd(io *streams) *cobra.Command {
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
	cmd.AddCommand(newMemoryLsCmd(io), newMemorySearchCmd(io), newMemoryShowCmd(io), newMemoryRmCmd(io))
	return cmd
}

func newMemoryLsCmd(io *streams) *cobra.Command {
	var output string
	var limit int
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
			if err := checkOutput(output); err != nil {
				return err
			}
			db, err := openReading(cmd)
			if errors.Is(err, errNoDatabase) {
				return printMemory(io, nil, 0, output, "memory is empty")
			}
			if err != nil {
				return usageError(err)
			}
			defer db.Close()
			items, total, err := db.MemoryList(cmd.Context(), limit)
			if err != nil {
				return err
			}
			return printMemory(io, items, total, output, "memory is empty")
		},
	}
	outputFlag(cmd, &output, "text", "text or json", textOrJSON)
	cmd.Flags().IntVar(&limit, "limit", store.DefaultMemoryLimit, "items to list")
	return cmd
}

func newMemorySearchCmd(io *streams) *cobra.Command {
	var output string
	var limit int
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
			if err := checkOutput(output); err != nil {
				return err
			}
			query := strings.Join(args, " ")
			db, err := openReading(cmd)
			if errors.Is(err, errNoDatabase) {
				return printMemory(io, nil, -1, output, "nothing found: memory is empty")
			}
			if err != nil {
				return usageError(err)
			}
			defer db.Close()
			items, err := db.MemorySearch(cmd.Context(), query, limit)
			if err != nil {
				return err
			}
			return printMemory(io, items, -1, output, fmt.Sprintf("nothing in memory matches %q", query))
		},
	}
	outputFlag(cmd, &output, "text", "text or json", textOrJSON)
	cmd.Flags().IntVar(&limit, "limit", store.DefaultMemoryLimit, "items to print at most")
	return cmd
}

// memoryJSON is one memory item in --output json.
type memoryJSON struct {
	Key   string   `json:"key"`
	Text  string   `json:"text"`
	Tags  []string `json:"tags"`
	Agent string   `json:"agent"`
	RunID string   `json:"run_id"`
	At    *string  `json:"at"`
	// Version counts the writes of the key; Author is who wrote this
	// version (the same as Agent, by the name memory.results uses).
	Version int64  `json:"version"`
	Author  string `json:"author"`
}

// printMemory prints items; total >= 0 is how many memory holds (a list
// that shows fewer says so), none what to say when there are no items.
func printMemory(io *streams, items []record.MemoryItem, total int, output, none string) error {
	if output == "json" {
		out := make([]memoryJSON, 0, len(items))
		for _, it := range items {
			tags := it.Tags
			if tags == nil {
				tags = []string{}
			}
			out = append(out, memoryJSON{Key: it.Key, Text: it.Text, Tags: tags, Agent: it.Agent, RunID: it.RunID, At: timeJSON(it.At),
				Version: it.Version, Author: it.Agent})
		}
		return writeJSON(io.out, out)
	}
	if len(items) == 0 {
		fmt.Fprintln(io.out, none)
		return nil
	}
	tw := tabwriter.NewWriter(io.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tAGE\tAGENT\tRUN\tTAGS\tTEXT")
	for _, it := range items {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", it.Key, ago(it.At), dash(it.Agent), dash(it.RunID),
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
