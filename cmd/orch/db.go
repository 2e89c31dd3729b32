package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/orch-cli/orch/runner/store"
)

// dbPath is the run database: --db, else ORCH_DB, else orch.db in the
// nearest .orch/ directory from the current directory upwards, as git finds
// its .git; with none, ./.orch/orch.db (which a reader reports missing).
func dbPath(cmd *cobra.Command) string {
	if p, ok := chosenDB(cmd); ok {
		return p
	}
	if dir, ok := store.FindProjectDir("."); ok {
		return filepath.Join(dir, store.DefaultPath())
	}
	return store.DefaultPath()
}

// chosenDB is the database a person named: --db, else ORCH_DB.
func chosenDB(cmd *cobra.Command) (string, bool) {
	if f := cmd.Flag("db"); f != nil && f.Changed {
		return f.Value.String(), true
	}
	if env := os.Getenv("ORCH_DB"); env != "" {
		return env, true
	}
	return "", false
}

// runDBPath is the database orch run records in: the one dbPath finds,
// else the one in the nearest .orch/ above the cuelist, else a new .orch/
// next to the cuelist (the project's directory, wherever orch is run from).
func runDBPath(cmd *cobra.Command, cuelist string) string {
	if p, ok := chosenDB(cmd); ok {
		return p
	}
	if dir, ok := store.FindProjectDir("."); ok {
		return filepath.Join(dir, store.DefaultPath())
	}
	dir := cuelist
	if st, err := os.Stat(cuelist); err != nil || !st.IsDir() {
		dir = filepath.Dir(cuelist)
	}
	if found, ok := store.FindProjectDir(dir); ok {
		dir = found
	}
	return filepath.Join(dir, store.DefaultPath())
}

// openDB opens (creating it if need be) the run database at path.
func openDB(cmd *cobra.Command, path string) (*store.DB, string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, "", err
	}
	sync, _ := cmd.Flags().GetString("sync")
	lockTimeout, err := lockTimeout(cmd)
	if err != nil {
		return nil, "", err
	}
	db, err := store.Open(abs, store.Options{Sync: sync, LockTimeout: lockTimeout})
	if err != nil {
		return nil, "", damaged(path, err)
	}
	return db, abs, nil
}

// lockTimeout is how long a write waits for another process's lock:
// --lock-timeout, else ORCH_LOCK_TIMEOUT, else the store's default.
func lockTimeout(cmd *cobra.Command) (time.Duration, error) {
	if f := cmd.Flag("lock-timeout"); f != nil && f.Changed {
		d, _ := cmd.Flags().GetDuration("lock-timeout")
		if d <= 0 {
			return 0, usageError(fmt.Errorf("--lock-timeout %s: give a duration above zero, such as 30s", d))
		}
		return d, nil
	}
	if env := os.Getenv("ORCH_LOCK_TIMEOUT"); env != "" {
		d, err := time.ParseDuration(env)
		if err != nil || d <= 0 {
			return 0, usageError(fmt.Errorf("ORCH_LOCK_TIMEOUT=%s: give a duration above zero, such as 30s", env))
		}
		return d, nil
	}
	return store.DefaultLockTimeout, nil
}

// openRunDB opens, creating it if need be, the database orch run records a
// run of cuelist in.
func openRunDB(cmd *cobra.Command, cuelist string) (*store.DB, string, error) {
	return openDB(cmd, runDBPath(cmd, cuelist))
}

// damagedError is a read or write that found the run database damaged: it
// says so first, with what is wrong, and what to do.
type damagedError struct {
	path, what string
	err        error
}

func (e *damagedError) Error() string {
	return fmt.Sprintf("the database %s is damaged: %s; its runs cannot be read (move it and its -wal and -shm files aside: orch run starts a new database)",
		e.path, e.what)
}

func (e *damagedError) Unwrap() error { return e.err }

// damaged turns an error that found the database at path damaged into a
// *damagedError, saying what SQLite's quick_check finds; other errors pass.
func damaged(path string, err error) error {
	var de *damagedError
	if !errors.Is(err, store.ErrDamaged) || errors.As(err, &de) {
		return err
	}
	return &damagedError{path: path, what: store.Diagnose(path, err), err: err}
}

// openFailed is the error of a command that could not open the database to
// read it: a usage error (no database there, or not one orch can use),
// except a damaged database, which is no mistake of the user's.
func openFailed(err error) error {
	if errors.Is(err, store.ErrDamaged) {
		return err
	}
	return usageError(err)
}

// errNoDatabase: a command that reads runs found no database yet.
var errNoDatabase = errors.New("no runs yet")

// openExisting opens the run database for a command that writes to an
// existing run; it never creates one. It migrates an older schema.
func openExisting(cmd *cobra.Command) (*store.DB, error) {
	path, err := existingDB(cmd)
	if err != nil {
		return nil, err
	}
	db, _, err := openDB(cmd, path)
	return db, err
}

// openReading opens the run database for a command that only reads it
// (status, events, logs, bb get, memory search): read-only, so that it
// works on a file it cannot write, and never migrates or writes it.
func openReading(cmd *cobra.Command) (*store.DB, error) {
	path, err := existingDB(cmd)
	if err != nil {
		return nil, err
	}
	db, err := store.OpenReadOnly(path)
	if errors.Is(err, store.ErrNoTables) { // made by an orch run that has not written yet
		return nil, fmt.Errorf("%w: the run database %s has no tables yet (orch run creates them)", errNoDatabase, path)
	}
	if err != nil {
		return nil, damaged(path, err)
	}
	return db, nil
}

// existingDB is the path of the run database, or errNoDatabase saying where
// none was found.
func existingDB(cmd *cobra.Command) (string, error) {
	path := dbPath(cmd)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		if _, chosen := chosenDB(cmd); chosen {
			return "", fmt.Errorf("%w: the run database %s does not exist (orch run creates it)", errNoDatabase, path)
		}
		if _, found := store.FindProjectDir("."); found {
			abs, _ := filepath.Abs(path)
			return "", fmt.Errorf("%w: the run database %s does not exist (orch run creates it)", errNoDatabase, abs)
		}
		cwd, _ := os.Getwd()
		return "", fmt.Errorf("%w: no .orch directory in %s or above (orch run creates one next to its cuelist: run this there, or give --db or ORCH_DB)", errNoDatabase, cwd)
	}
	return path, nil
}

// onRun is the start of every command that acts on one run: it opens the
// existing run database (a missing one is a usage error: there is no such
// run), resolves ref (an id, a unique prefix or "last") and calls f.
func onRun(cmd *cobra.Command, ref string, f func(ctx context.Context, db *store.DB, dbFile, id string) error) error {
	return onRunWith(cmd, openExisting, ref, f)
}

// onRunReading is onRun for a command that only reads the run: the
// database is opened read-only (openReading).
func onRunReading(cmd *cobra.Command, ref string, f func(ctx context.Context, db *store.DB, dbFile, id string) error) error {
	return onRunWith(cmd, openReading, ref, f)
}

func onRunWith(cmd *cobra.Command, open func(*cobra.Command) (*store.DB, error), ref string,
	f func(ctx context.Context, db *store.DB, dbFile, id string) error) error {
	db, err := open(cmd)
	if err != nil {
		return openFailed(err)
	}
	defer db.Close()
	ctx := cmd.Context()
	id, err := resolveRun(ctx, db, ref)
	if err != nil {
		return damaged(dbPath(cmd), err)
	}
	return damaged(dbPath(cmd), f(ctx, db, db.Path(), id))
}

// resolveRun turns RUN (an id, a unique prefix, or "last") into a run id; a
// run that does not exist is a usage error.
func resolveRun(ctx context.Context, db *store.DB, ref string) (string, error) {
	id, err := db.ResolveRun(ctx, ref)
	if errors.Is(err, store.ErrDamaged) {
		return "", err
	}
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
	db, err := openReading(cmd)
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

// elsewhereNote is what orch run says when it records in a database that
// the other commands, run from here, would not find (a new .orch/ next to a
// cuelist in another directory): where it is, and how to reach it.
func elsewhereNote(cmd *cobra.Command, dbFile string) string {
	here, err := filepath.Abs(dbPath(cmd))
	if err != nil || here == dbFile {
		return ""
	}
	project := filepath.Dir(filepath.Dir(dbFile))
	if cwd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(cwd, project); err == nil && len(rel) < len(project) {
			project = rel
		}
	}
	return fmt.Sprintf("orch: this run is recorded in %s; the other orch commands find it when run in %s (or with --db %s)",
		dbFile, project, dbFile)
}
