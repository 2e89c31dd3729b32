package main

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

func newMemoryShowCmd(io *streams) *cobra.Command {
	var output string
	var history bool
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
			if err := checkOutput(output); err != nil {
				return err
			}
			key := args[0]
			db, err := openReading(cmd)
			if errors.Is(err, errNoDatabase) {
				return fmt.Errorf("memory has no item %q: memory is empty", key)
			}
			if err != nil {
				return usageError(err)
			}
			defer db.Close()
			items, err := db.MemoryHistory(cmd.Context(), key)
			if err != nil {
				return err
			}
			if len(items) == 0 {
				return fmt.Errorf("memory has no item %q (orch memory ls lists the keys)", key)
			}
			if !history {
				items = items[:1]
			}
			if output == "json" {
				return printMemory(io, items, -1, output, "")
			}
			tw := tabwriter.NewWriter(io.out, 0, 0, 2, ' ', 0)
			for i, it := range items {
				if i > 0 {
					fmt.Fprintln(tw)
				}
				fmt.Fprintf(tw, "%s version %d\tby %s in run %s, %s\n", it.Key, it.Version, dash(it.Agent), dash(it.RunID), ago(it.At))
				if len(it.Tags) > 0 {
					fmt.Fprintf(tw, "tags: %s\n", strings.Join(it.Tags, ", "))
				}
				fmt.Fprintln(tw, it.Text)
			}
			return tw.Flush()
		},
	}
	outputFlag(cmd, &output, "text", "text or json", textOrJSON)
	cmd.Flags().BoolVar(&history, "history", false, "every version kept, newest first")
	return cmd
}

func newMemoryRmCmd(io *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rm KEY",
		Short: "Forget a memory item and its history",
		Long: `Forget memory item KEY, every version of it. A key memory does not have
exits 1 (nothing is changed).`,
		Example: `  orch memory rm lesson`,
		Args:    argsBetween(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			db, err := openExisting(cmd)
			if err != nil {
				return usageError(err)
			}
			defer db.Close()
			ok, err := db.MemoryDelete(cmd.Context(), "", args[0])
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("memory has no item %q: nothing to forget (orch memory ls lists the keys)", args[0])
			}
			fmt.Fprintf(io.out, "forgot memory item %s\n", args[0])
			return nil
		},
	}
	return cmd
}
