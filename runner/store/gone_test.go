package store

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestDeletedFileNotMadeAgain: a connection the pool opens after the
// database file was deleted under the handle fails instead of creating a
// new, empty database at the path (which the file check then took for
// "replaced by another file", and which was left behind).
func TestDeletedFileNotMadeAgain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "orch.db")
	d, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var conns []*sql.Conn
	for range 3 { // more than the pool keeps open now: at least one is new
		c, err := d.sql.Conn(ctx)
		if err != nil {
			break
		}
		conns = append(conns, c)
		if c.PingContext(ctx) != nil {
			break
		}
		_, _ = c.ExecContext(ctx, "SELECT count(*) FROM runs")
	}
	for _, c := range conns {
		c.Close()
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the deleted database %s was made again (stat: %v)", path, err)
	}
}
