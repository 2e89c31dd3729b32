package store

import (
	"bytes"
	"encoding/binary"
)

// A run reads its blackboard for every task it hands out, and the board is
// kept in memory between reads (Blackboard). Whether another process has
// committed since was asked with PRAGMA data_version: a read transaction,
// with its locks, on every read. SQLite counts every commit in the header of
// the WAL index, the -shm file beside the database ("The WAL-Index File
// Format" in SQLite's file format documentation: iChange, "incremented with
// each transaction"), which it writes twice, the second copy last. Reading
// that counter is one pread: while it is where it was when the board was
// read, plus this handle's own commits (which it counts itself: tryCommit),
// nobody else has written, and the board in memory is the board.

// walIndexHeader is the size of the two copies of the WAL-index header.
const walIndexHeader = 2 * 48

// walIndexVersion is the header's iVersion of every SQLite since 3.7.0.
const walIndexVersion = 3007000

// walChange returns the WAL index's change counter; ok is false when it
// cannot be read or a commit is writing it (the two copies differ). The
// caller holds d.committing.
func (d *DB) walChange() (change uint32, ok bool) {
	hdr, ok := d.walHeader()
	return binary.NativeEndian.Uint32(hdr[8:12]), ok
}

// walHeader returns the WAL index's header (one copy: the change counter,
// the WAL's last frame, the database size, salts and checksums); ok as for
// walChange.
func (d *DB) walHeader() (hdr [walIndexHeader / 2]byte, ok bool) {
	var b [walIndexHeader]byte
	if !d.walIndex.read(b[:]) {
		return hdr, false
	}
	copy(hdr[:], b[:48])
	if !bytes.Equal(b[:48], b[48:]) || hdr[12] == 0 || binary.NativeEndian.Uint32(hdr[:]) != walIndexVersion {
		return hdr, false // being written, not initialized, or not a header this code knows
	}
	return hdr, true
}

// ownChange is the WAL index's header as this handle's last commit left it
// (known: read after it, its change counter moved by exactly that commit):
// while the header is still that, byte for byte, at the next BEGIN, nobody
// else has committed between. The whole header, not the counter alone: a
// header SQLite rebuilt (recovery after a writer died in the middle of
// writing it) could come back to the same count, never to the same frames,
// salts and checksums with other data.
type ownChange struct {
	hdr   [walIndexHeader / 2]byte
	known bool
}

// afterCommit reads the change counter after this handle's commit: the
// commit's own move is carried over (ownChange, and the boards in memory
// stay fresh) if the counter moved by exactly that commit (one if it wrote
// a row, none if not) from where it was when the transaction began (before;
// the write lock kept everyone else out until COMMIT). Any other move means
// another commit came between: what was read is read again.
func (d *DB) afterCommit(before uint32, beforeOK, wrote bool) {
	if len(d.boards) == 0 { // the -shm is not read (tryCommit)
		d.ownChange.known = false
		return
	}
	hdr, afterOK := d.walHeader()
	after := binary.NativeEndian.Uint32(hdr[8:12])
	want := before
	if wrote {
		want++
	}
	carried := beforeOK && afterOK && after == want
	d.ownChange = ownChange{hdr: hdr, known: carried}
	for id, c := range d.boards {
		if c.fresh = c.fresh && carried && c.change == before; c.fresh {
			c.change = after
		}
		d.boards[id] = c
	}
}
