package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/orch-cli/orch/runner/store"
)

// dbPath is the run database: --db, else ORCH_DB, else ./.orch/orch.db.
func dbPath(cmd *cobra.Command) string {
	if f := cmd.Flag("db"); f != nil && f.Changed {
		return f.Value.String()
	}
	if env := os.Getenv("ORCH_DB"); env != "" {
		return env
	}
	return store.DefaultPath()
}

// openDB opens the run database, creating it (for orch run).
func openDB(cmd *cobra.Command) (*store.DB, string, error) {
	path, err := filepath.Abs(dbPath(cmd))
	if err != nil {
		return nil, "", err
	}
	sync, _ := cmd.Flags().GetString("sync")
	db, err := store.Open(path, store.Options{Sync: sync})
	if err != nil {
		return nil, "", err
	}
	return db, path, nil
}

// errNoDatabase: a command that reads runs found no database yet.
var errNoDatabase = errors.New("no runs yet")

// openExisting opens the run database for reading; it never creates one.
func openExisting(cmd *cobra.Command) (*store.DB, error) {
	path := dbPath(cmd)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: the run database %s does not exist (orch run creates it; --db or ORCH_DB point elsewhere)", errNoDatabase, path)
	}
	db, _, err := openDB(cmd)
	return db, err
}

// onRun is the start of every command that acts on one run: it opens the
// existing run database (a missing one is a usage error: there is no such
// run), resolves ref (an id, a unique prefix or "last") and calls f.
func onRun(cmd *cobra.Command, ref string, f func(ctx context.Context, db *store.DB, dbFile, id string) error) error {
	db, err := openExisting(cmd)
	if err != nil {
		return usageError(err)
	}
	defer db.Close()
	ctx := cmd.Context()
	id, err := resolveRun(ctx, db, ref)
	if err != nil {
		return err
	}
	return f(ctx, db, db.Path(), id)
}

// resolveRun turns RUN (an id, a unique prefix, or "last") into a run id; a
// run that does not exist is a usage error.
func resolveRun(ctx context.Context, db *store.DB, ref string) (string, error) {
	id, err := db.ResolveRun(ctx, ref)
	if err != nil {
		return "", usageError(err)
	}
	return id, nil
}

// completeRuns offers recent run ids for shell completion.
func completeRuns(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	db, err := openExisting(cmd)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	defer db.Close()
	runs, _, err := db.Runs(cmd.Context(), 50)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	out := []string{"last\tthe most recent run"}
	for _, r := range runs {
		out = append(out, fmt.Sprintf("%s\t%s %s", r.ID, r.Cuelist, r.State))
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
