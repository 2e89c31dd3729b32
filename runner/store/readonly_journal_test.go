package store

import (
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// hotJournalDB leaves what an orch run killed while it created the
// database can leave: a file still in rollback-journal mode with the
// journal of an unfinished transaction beside it (a "hot" journal). A
// read-only connection cannot roll it back (SQLITE_READONLY_ROLLBACK).
func hotJournalDB(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "src.db")
	raw, err := sql.Open("sqlite", "file:"+src+"?_pragma=journal_mode(DELETE)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.SetMaxOpenConns(1)
	if _, err := raw.Exec("CREATE TABLE t (x)"); err != nil {
		t.Fatal(err)
	}
	tx, err := raw.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	// More than the cache holds: SQLite syncs the journal and writes
	// pages into the file before the commit, as a long transaction does.
	if _, err := tx.Exec("PRAGMA cache_size=2"); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 2000) INSERT INTO t SELECT randomblob(500) FROM n"); err != nil {
		t.Fatal(err)
	}
	// The copy is what the disk holds when the process dies here.
	dst := filepath.Join(dir, "orch.db")
	for _, suffix := range []string{"", "-journal"} {
		b, err := os.ReadFile(src + suffix)
		if err != nil {
			t.Fatalf("no %s: %v", src+suffix, err)
		}
		if err := os.WriteFile(dst+suffix, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// TestOpenReadOnlyRecoversAHotJournal: orch status right after an orch run
// was killed while creating its database must not fail with "the database
// is read-only: attempt to write a readonly database": the unfinished
// transaction is rolled back first, as any SQLite reader that may write
// the file does, and the database then reads as holding no runs.
func TestOpenReadOnlyRecoversAHotJournal(t *testing.T) {
	path := hotJournalDB(t)
	_, err := OpenReadOnly(path)
	if !errors.Is(err, ErrNotOrch) && !errors.Is(err, ErrNoTables) {
		t.Fatalf("OpenReadOnly after a kill during creation: %v, want 'no runs yet' or 'not an orch database'", err)
	}
	if _, serr := os.Stat(path + "-journal"); !os.IsNotExist(serr) {
		t.Errorf("the hot journal is still there (%v)", serr)
	}
}
