package store

import (
	"context"
	"database/sql/driver"
	"sync/atomic"

	"modernc.org/sqlite"
)

// checkedConnector opens the connections of a writing handle's pool, each
// after a look at the file (checkFile). A connection opened on a file cut
// under the run meets a WAL index that no longer matches it, and SQLite
// retries that open for about ten seconds before it gives up; the look says
// at once that the file is damaged (or gone). A short run opens its second
// connection late or never (warmread.go), so the first one the pool opens
// after its first may well be opened after a cut.
type checkedConnector struct {
	dsn    string
	handle atomic.Pointer[DB] // nil while open migrates: the file is not known yet
}

var sqliteDriver = &sqlite.Driver{}

func (c *checkedConnector) Connect(context.Context) (driver.Conn, error) {
	if d := c.handle.Load(); d != nil {
		if err := d.checkFile(); err != nil {
			return nil, err
		}
	}
	return sqliteDriver.Open(c.dsn)
}

func (c *checkedConnector) Driver() driver.Driver { return sqliteDriver }
