//go:build unix

package store

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

const (
	killRuns   = 20
	killPerRun = 1000
)

// migrateKillChild is the child process of the kill tests: it migrates the
// database at ORCH_STORE_MIGRATE_DB to schema 10 and is killed (or kills
// itself) on the way.
func migrateKillChild() {
	path, mode := os.Getenv("ORCH_STORE_MIGRATE_DB"), os.Getenv("ORCH_STORE_MIGRATE_MODE")
	switch mode {
	case "before-commit":
		// What migrate does, stopped before its COMMIT: the copy is bigger
		// than SQLite's page cache, so uncommitted pages are in the WAL.
		if err := migrateUncommitted(path); err != nil {
			fmt.Println(err)
			os.Exit(3)
		}
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	case "open":
		fmt.Println("opening")
		d, err := Open(path, Options{})
		if err != nil {
			fmt.Println(err)
			os.Exit(3)
		}
		d.Close()
		os.Exit(0)
	case "after-commit":
		// Migrated and committed, then killed without Close: the new
		// schema is in the WAL, not yet in the file.
		if _, err := Open(path, Options{}); err != nil {
			fmt.Println(err)
			os.Exit(3)
		}
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	os.Exit(5)
}

// migrateUncommitted runs migration 10 and the version bump in a
// transaction it never commits.
func migrateUncommitted(path string) error {
	db, err := sql.Open("sqlite", dsn(path, "NORMAL", busyTimeout))
	if err != nil {
		return err
	}
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	if _, err := tx.Exec(migrations[9]); err != nil {
		return err
	}
	_, err = tx.Exec("PRAGMA user_version = 10")
	return err
}

// v9KillDB writes a database of schema 9 at path with killRuns runs of
// killPerRun events, each with a big run/started row.
func v9KillDB(t *testing.T, path string) string {
	t.Helper()
	tmp := olderDB(t, 9)
	fillV9(t, tmp, killRuns, killPerRun)
	copyFile(t, tmp, path)
	return path
}

// copyFile copies a closed database file (no WAL beside it).
func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestMigrationKilledAtCommit kills a process in the v10 migration's
// transaction, its uncommitted pages already in the WAL (before-commit: the
// database is the schema 9 one, whole), and one that has migrated and not
// closed, the new schema in the WAL only (after-commit: schema 10, whole).
// Either way the next Open ends at schema 10 with every event.
func TestMigrationKilledAtCommit(t *testing.T) {
	if os.Getenv("ORCH_STORE_MIGRATE_DB") != "" {
		migrateKillChild()
	}
	for mode, version := range map[string]int{"before-commit": 9, "after-commit": 10} {
		t.Run(mode, func(t *testing.T) {
			path := v9KillDB(t, filepath.Join(t.TempDir(), "orch.db"))
			out, sig := runMigrateChild(t, "TestMigrationKilledAtCommit", path, mode, -1)
			if sig != syscall.SIGKILL {
				t.Fatalf("the child did not die by SIGKILL (%v): %s", sig, out)
			}
			if st, err := os.Stat(path + "-wal"); err != nil || st.Size() == 0 {
				t.Fatalf("the WAL is empty (%v): the kill caught nothing in flight", err)
			}
			checkMigrationOutcome(t, path, version)
		})
	}
}

// TestMigrationKilledDuringOpen kills orch's Open while it migrates, at a
// different moment each time: each time the database is either the schema 9
// one or the schema 10 one, whole, and the next Open ends at schema 10.
func TestMigrationKilledDuringOpen(t *testing.T) {
	if os.Getenv("ORCH_STORE_MIGRATE_DB") != "" {
		migrateKillChild()
	}
	template := v9KillDB(t, filepath.Join(t.TempDir(), "template.db"))
	// One Open left alone says how long the migration takes here; the kills
	// fall at fractions of it. Which version each ends at is not asserted
	// (the machine's load moves it), only that it is one of the two.
	path := filepath.Join(t.TempDir(), "orch.db")
	copyFile(t, template, path)
	start := time.Now()
	runMigrateChild(t, "TestMigrationKilledDuringOpen", path, "open", -1)
	took := time.Since(start)
	for rep, frac := range []float64{0.25, 0.5, 0.75, 1, 1.5} {
		path := filepath.Join(t.TempDir(), "orch.db")
		copyFile(t, template, path)
		runMigrateChild(t, "TestMigrationKilledDuringOpen", path, "open", time.Duration(frac*float64(took)))
		v := queryInt(t, rawDB(t, path), "PRAGMA user_version")
		if v != 9 && v != 10 {
			t.Fatalf("rep %d: user_version %d after the kill", rep, v)
		}
		t.Logf("rep %d: killed at schema %d", rep, v)
		checkMigrationOutcome(t, path, int(v))
	}
}

// checkMigrationOutcome checks that the database at path is whole at schema
// version (the events table its kind, every event there), then that Open
// brings it to schema 10 with every event.
func checkMigrationOutcome(t *testing.T, path string, version int) {
	t.Helper()
	integrityOK(t, path)
	raw := rawDB(t, path)
	if v := queryInt(t, raw, "PRAGMA user_version"); v != int64(version) {
		t.Fatalf("user_version %d, want %d", v, version)
	}
	if eventsIsRowidTable(t, raw) != (version >= 10) {
		t.Fatalf("at schema %d, events is a rowid table: %v", version, version < 10)
	}
	if n := queryInt(t, raw, "SELECT count(*) FROM events"); n != killRuns*killPerRun {
		t.Fatalf("%d events, want %d", n, killRuns*killPerRun)
	}
	raw.Close()
	d, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	raw = rawDB(t, path)
	if v := queryInt(t, raw, "PRAGMA user_version"); v != int64(schemaVersion) || !eventsIsRowidTable(t, raw) {
		t.Fatalf("after Open: user_version %d, rowid table %v", v, eventsIsRowidTable(t, raw))
	}
	if n := queryInt(t, raw, "SELECT count(*) FROM events"); n != killRuns*killPerRun {
		t.Fatalf("after Open: %d events, want %d", n, killRuns*killPerRun)
	}
	integrityOK(t, path)
}

// runMigrateChild runs the test named in a child process in mode; with
// killAfter >= 0, it kills the child that long after it says it opens. It
// returns the child's output and the signal that ended it (0 if none).
func runMigrateChild(t *testing.T, test, path, mode string, killAfter time.Duration) (string, syscall.Signal) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hung child fails the test
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+test+"$")
	cmd.Env = append(os.Environ(), "ORCH_STORE_MIGRATE_DB="+path, "ORCH_STORE_MIGRATE_MODE="+mode)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(stdout)
	first, _ := r.ReadString('\n')
	if killAfter >= 0 && first == "opening\n" {
		time.Sleep(killAfter)
		cmd.Process.Kill()
	}
	rest, _ := io.ReadAll(r)
	err = cmd.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if ws := exit.Sys().(syscall.WaitStatus); ws.Signaled() {
			return first + string(rest), ws.Signal()
		}
		t.Fatalf("child: %v: %s%s", err, first, rest)
	}
	return first + string(rest), 0
}
