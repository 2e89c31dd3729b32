//go:build unix && !bare

package main

import (
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/orch-cli/orch/runner/store"
)

// The test binary is the spawner too (SPAWN_TEST=main) and the child it
// starts (SPAWN_TEST=main, argument "child"): each child looks at the
// database and appends what it sees to SPAWN_TEST_SEEN, so the test can
// tell that a child's start was committed before it ran.
func TestMain(m *testing.M) {
	if os.Getenv("SPAWN_TEST") == "main" {
		if len(os.Args) == 2 && os.Args[1] == "child" {
			if err := child(os.Getenv("SPAWN_TEST_DB"), os.Getenv("SPAWN_TEST_SEEN")); err != nil {
				fmt.Fprintln(os.Stderr, "child:", err)
				os.Exit(1)
			}
			os.Exit(0)
		}
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// child appends what the database says while it runs: for -rows min, the
// starts and ends recorded; for -rows orch, the cues at GO and completed
// and the attempts running.
func child(db, seen string) error {
	d, err := sql.Open("sqlite", "file:"+db+"?mode=ro")
	if err != nil {
		return err
	}
	defer d.Close()
	var line string
	var a, b, c int
	if err := d.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = 'children'`).Scan(&a); err != nil {
		return err
	}
	if a == 1 {
		err = d.QueryRow(`SELECT count(*) - count(exit_code), count(exit_code) FROM children`).Scan(&a, &b)
		line = fmt.Sprintf("starts %d ends %d", a, b)
	} else {
		err = d.QueryRow(`SELECT (SELECT count(*) FROM cues WHERE state = 'go'), (SELECT count(*) FROM cues WHERE state = 'completed'),
			(SELECT count(*) FROM attempts WHERE state = 'running')`).Scan(&a, &b, &c)
		line = fmt.Sprintf("go %d completed %d running %d", a, b, c)
	}
	if err != nil {
		return err
	}
	f, err := os.OpenFile(seen, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = fmt.Fprintln(f, line)
	return err
}

// spawn runs the spawner with args, its children the test binary's child
// mode; it returns what the children saw.
func spawn(t *testing.T, dir string, args ...string) []string {
	t.Helper()
	seen := filepath.Join(t.TempDir(), "seen")
	args = append(args, os.Args[0], "child")
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "SPAWN_TEST=main", "SPAWN_TEST_DB="+filepath.Join(dir, recordFile), "SPAWN_TEST_SEEN="+seen)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("spawn %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	b, err := os.ReadFile(seen)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

func openRecord(t *testing.T, dir string) *sql.DB {
	t.Helper()
	d, err := sql.Open("sqlite", "file:"+filepath.Join(dir, recordFile)+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// TestRecordMinRows: -record commits each child's start before the child
// runs (each child sees its own start and every earlier child's end), in
// one transaction with the previous child's end; a second run adds its own
// rows beside the first's.
func TestRecordMinRows(t *testing.T) {
	dir := t.TempDir()
	seen := spawn(t, dir, "-n", "3", "-p", "1", "-record", dir)
	if want := []string{"starts 1 ends 0", "starts 2 ends 1", "starts 3 ends 2"}; !reflect.DeepEqual(seen, want) {
		t.Errorf("the children saw %q, want %q", seen, want)
	}
	spawn(t, dir, "-n", "3", "-p", "1", "-record", dir)

	rows, err := openRecord(t, dir).Query(`SELECT run, child, pid IS NOT NULL AND pid > 0, exit_code FROM children ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	runs := map[int64]bool{}
	for rows.Next() {
		var run, child int64
		var pid bool
		var exit sql.NullInt64
		if err := rows.Scan(&run, &child, &pid, &exit); err != nil {
			t.Fatal(err)
		}
		runs[run] = true
		if exit.Valid {
			got = append(got, fmt.Sprintf("%d ended %d pid %v", child, exit.Int64, pid))
		} else {
			got = append(got, fmt.Sprintf("%d starts pid %v", child, pid))
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	one := []string{"0 starts pid false", "0 ended 0 pid true", "1 starts pid false", "1 ended 0 pid true", "2 starts pid false", "2 ended 0 pid true"}
	if want := append(one, one...); !reflect.DeepEqual(got, want) || len(runs) != 2 {
		t.Errorf("rows of %d runs:\n%q\nwant two runs of\n%q", len(runs), got, one)
	}
}

// TestRecordOrchRows: -rows orch commits a child's WARNING, attempt and GO
// before it runs, the previous one's completion with them, and the events
// saying so in order, numbered from 1 without a gap.
func TestRecordOrchRows(t *testing.T) {
	dir := t.TempDir()
	seen := spawn(t, dir, "-n", "3", "-p", "1", "-record", dir, "-rows", "orch")
	if want := []string{"go 1 completed 0 running 1", "go 1 completed 1 running 1", "go 1 completed 2 running 1"}; !reflect.DeepEqual(seen, want) {
		t.Errorf("the children saw %q, want %q", seen, want)
	}
	d := openRecord(t, dir)
	var run, state string
	if err := d.QueryRow(`SELECT id, state FROM runs`).Scan(&run, &state); err != nil || state != "completed" {
		t.Fatalf("the run: %s %s, %v", run, state, err)
	}
	var cues, attempts int
	if err := d.QueryRow(`SELECT (SELECT count(*) FROM cues WHERE state = 'completed' AND go_at IS NOT NULL AND ended_at >= go_at),
		(SELECT count(*) FROM attempts WHERE state = 'completed' AND exit_code = 0 AND pid > 0)`).Scan(&cues, &attempts); err != nil {
		t.Fatal(err)
	}
	if cues != 3 || attempts != 3 {
		t.Errorf("%d cues and %d attempts completed, want 3 of each", cues, attempts)
	}
	rows, err := d.Query(`SELECT seq, type, cue_id, state FROM events WHERE run_id = ? ORDER BY seq`, run)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for n := 1; rows.Next(); n++ {
		var seq int
		var typ, cue, state string
		if err := rows.Scan(&seq, &typ, &cue, &state); err != nil {
			t.Fatal(err)
		}
		if seq != n {
			t.Errorf("event %d has seq %d", n, seq)
		}
		got = append(got, strings.Join(strings.Fields(typ+" "+cue+" "+state), " "))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := []string{"run/started"}
	for i := range 3 {
		c := fmt.Sprintf("C%d", i)
		if i > 0 {
			p := fmt.Sprintf("C%d", i-1)
			want = append(want, "attempt/ended "+p+" completed", "cue/state "+p+" completed")
		}
		want = append(want, "cue/state "+c+" warning", "attempt/started "+c, "cue/state "+c+" standby", "cue/state "+c+" go")
	}
	want = append(want, "attempt/ended C2 completed", "cue/state C2 completed", "run/state completed")
	if !reflect.DeepEqual(got, want) {
		t.Errorf("events:\n%q\nwant\n%q", got, want)
	}
}

// TestRecordTwoAtATime: with -p 2 every child's start is recorded, and
// every end, with one run's rows whatever order the workers take them in.
func TestRecordTwoAtATime(t *testing.T) {
	for _, shape := range []string{"min", "orch"} {
		dir := t.TempDir()
		spawn(t, dir, "-n", "7", "-p", "2", "-record", dir, "-rows", shape)
		q := `SELECT count(DISTINCT child), count(exit_code) FROM children`
		if shape == "orch" {
			q = `SELECT (SELECT count(*) FROM cues WHERE state = 'completed'), (SELECT count(*) FROM attempts WHERE exit_code = 0)`
		}
		var started, ended int
		if err := openRecord(t, dir).QueryRow(q).Scan(&started, &ended); err != nil {
			t.Fatal(err)
		}
		if started != 7 || ended != 7 {
			t.Errorf("-rows %s: %d children started, %d ended, want 7 of each", shape, started, ended)
		}
	}
}

// TestOrchRowsMatchTheStore: -rows orch writes tables shaped as orch's:
// cues, attempts and events have the columns (names, types, constraints,
// defaults, keys) and indexes runner/store's schema gives them, so the
// floor's figures follow when orch's schema changes.
func TestOrchRowsMatchTheStore(t *testing.T) {
	orch, err := store.Open(filepath.Join(t.TempDir(), "orch.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	orch.Close()
	dir := t.TempDir()
	spawn(t, dir, "-n", "1", "-p", "1", "-record", dir, "-rows", "orch")
	shape := func(path, table string) []string {
		d, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		var got []string
		for _, q := range []string{
			`SELECT name || ' ' || type || ' ' || "notnull" || ' ' || coalesce(dflt_value, 'NULL') || ' ' || pk FROM pragma_table_info(?)`,
			`SELECT 'foreign key ' || "table" || ' ' || "from" || ' ' || coalesce("to", '') FROM pragma_foreign_key_list(?)`,
			`SELECT 'index ' || name || ' ' || sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL`,
			`SELECT 'without rowid' FROM sqlite_master WHERE type = 'table' AND name = ? AND sql LIKE '%WITHOUT ROWID%'`,
		} {
			rows, err := d.Query(q, table)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var s string
				if err := rows.Scan(&s); err != nil {
					t.Fatal(err)
				}
				got = append(got, strings.Join(strings.Fields(s), " "))
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			rows.Close()
		}
		return got
	}
	for _, table := range []string{"cues", "attempts", "events"} {
		want, got := shape(orch.Path(), table), shape(filepath.Join(dir, recordFile), table)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("table %s of -rows orch:\n%q\nin orch's store:\n%q", table, got, want)
		}
	}
}
