package store

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/orch-cli/orch/runner/record"
)

// TestDamagedDatabaseFailsTheRun: a database file truncated or overwritten
// under a live handle still takes commits (SQLite appends them to the WAL),
// but the next checkpoint finds it damaged: from then on every write, Flush
// and Close fail, saying the database is damaged, and so does opening the
// overwritten file again.
func TestDamagedDatabaseFailsTheRun(t *testing.T) {
	for name, damage := range map[string]func(path string) error{
		"truncated": func(path string) error {
			return errors.Join(os.Truncate(path, 0), os.Truncate(path+"-wal", 0))
		},
		"overwritten": func(path string) error {
			return os.WriteFile(path, bytes.Repeat([]byte("not a database "), 2000), 0o600)
		},
	} {
		t.Run(name, func(t *testing.T) {
			d, path := openTest(t)
			ctx := context.Background()
			startRun(t, d, "r1", "a", "b")
			appendOK(t, d, record.Event{RunID: "r1", Type: record.EvCueState, Cue: "a", State: "go"})
			d.checkpoint(d.sql)
			appendOK(t, d, record.Event{RunID: "r1", Type: record.EvCueState, Cue: "a", State: "completed"})
			if err := damage(path); err != nil {
				t.Fatal(err)
			}
			d.checkpoint(d.sql) // what the checkpointer does within 100 ms of a commit
			for what, err := range map[string]error{
				"append": d.Append(ctx, record.Event{RunID: "r1", Type: record.EvCueState, Cue: "b", State: "go"}),
				"flush":  d.Flush(ctx),
				"close":  d.Close(),
			} {
				if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "the database "+path+" is damaged") {
					t.Errorf("%s after the file was %s: %v, want it to say the database is damaged", what, name, err)
				}
			}
			if name == "truncated" {
				return // an empty file is a new, empty database to SQLite
			}
			d2, err := Open(path, Options{})
			if err == nil {
				_, _, err = d2.Runs(ctx, 10)
				d2.Close()
			}
			if !errors.Is(err, ErrDamaged) {
				t.Errorf("opening and reading the %s file: %v, want it to say the database is damaged", name, err)
			}
		})
	}
}
