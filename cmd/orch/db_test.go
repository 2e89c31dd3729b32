//go:build unix

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStatusDamagedDatabase: orch status on a database whose pages were
// overwritten, or whose header was, says the database is damaged and what
// SQLite finds wrong, and exits 1 (not a usage error).
func TestStatusDamagedDatabase(t *testing.T) {
	dir := writeFiles(t, map[string]string{"cuelist.yaml": `
cuelist:
  id: tiny
  cues:
    - {id: A, agents: [ok]}
---
agent: {id: ok, command: ["true"]}
`})
	for name, damage := range map[string]func(f *os.File) error{
		"pages": func(f *os.File) error { // the run's tables, past the schema page
			_, err := f.WriteAt(bytes.Repeat([]byte{0xa5}, 6*4096), 3*4096)
			return err
		},
		"header": func(f *os.File) error {
			_, err := f.WriteAt([]byte("this is not SQLite"), 0)
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "orch.db")
			if code, stdout, stderr := runOrch(t, dir, "run", "--db", db, "cuelist.yaml"); code != 0 {
				t.Fatalf("orch run: exit %d\n%s%s", code, stdout, stderr)
			}
			f, err := os.OpenFile(db, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			err = damage(f)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"status"}, {"status", "last"}, {"events", "last"}} {
				code, stdout, stderr := runOrch(t, dir, append(args, "--db", db)...)
				if want := "the database " + db + " is damaged: "; code != 1 || !strings.Contains(stderr, want) {
					t.Errorf("orch %s on a database with damaged %s: exit %d, want 1 and %q\n%s%s",
						strings.Join(args, " "), name, code, want, stdout, stderr)
				}
			}
		})
	}
}
