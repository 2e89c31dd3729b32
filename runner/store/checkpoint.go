package store

import (
	"context"
	"fmt"
	"time"
)

// checkpointEvery is how often a writing process folds the WAL back into the
// database file. SQLite's own automatic checkpoint runs inside the commit
// that crosses its threshold, stalling whichever decision that commit
// carries; orch turns it off (wal_autocheckpoint=0 in the DSN) and
// checkpoints from this goroutine instead, off every caller's path.
const checkpointEvery = 100 * time.Millisecond

// checkpointer runs PASSIVE checkpoints while this handle has written since
// the last one; a PASSIVE checkpoint never waits for readers or writers. It
// also checks that the file is still there (gone.go).
func (d *DB) checkpointer() {
	defer close(d.checkpointDone)
	t := time.NewTicker(checkpointEvery)
	defer t.Stop()
	var last int64
	var checked time.Time
	for {
		select {
		case <-d.checkpointQuit:
			return
		case <-t.C:
		}
		n := d.stats.transactions.Load()
		// The file is looked at right before every checkpoint too: a
		// checkpoint writes pages back into a file cut under the run, so
		// its size looks whole again and the cut would never be seen.
		if n != last || time.Since(checked) >= fileCheckEvery {
			checked = time.Now()
			if d.checkFile() != nil {
				continue
			}
		}
		if n != last {
			last = n
			d.checkpoint(d.sql)
		}
	}
}

// checkpoint checkpoints on q: the checkpointer's on the pool, never on the
// write connection (it would hold up the commits); Close's on the write
// connection, idle for good by then, which spares a short run a second
// connection opened only for it.
func (d *DB) checkpoint(q readConn) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var busy, frames, copied int64
	err := q.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &copied)
	if checkpointFailed(err) {
		d.setFault(fmt.Errorf("checkpointing %s: %w", d.path, d.plain(err)))
		return
	}
	if err == nil && copied > 0 {
		d.hadHeader.Store(true) // pages are in the file now: see checkFile
	}
}
