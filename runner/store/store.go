// Package store is orch's embedded SQLite database of runs: it implements
// runner.Recorder (its roles: event log, blackboard, memory, control) and
// answers the CLI's queries (orch status, events, logs), for which
// OpenReadOnly opens a database without migrating or writing it.
//
// Every change of a run is an event; Append commits the events together with
// their effect on the state tables (runs, cues, attempts, messages,
// cooldowns) in one transaction, so the log and the state never disagree and
// nothing is acted on before it is recorded. One writer goroutine per *DB
// owns all writes and batches concurrent callers into as few transactions as
// possible (group commit). Several orch processes may use one database file
// at once: writes take the write lock when their transaction begins
// (BEGIN IMMEDIATE), and sequence numbers are assigned inside it.
//
// The database runs in WAL mode with synchronous=NORMAL by default, which
// loses nothing when orch is killed; Options.Sync "full" also survives a
// power loss, at about 1 ms per commit.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/orch-cli/orch/runner/record"
)

var _ record.Recorder = (*DB)(nil)

// busyTimeout is how long a reading connection waits for another
// process's lock; writes wait for Options.LockTimeout (see lock.go).
const busyTimeout = 10 * time.Second

// ErrClosed is returned by the methods of a *DB after Close.
var ErrClosed = errors.New("run database is closed")

// DefaultPath is where orch keeps its database when neither --db nor ORCH_DB
// says otherwise: relative to the project directory.
func DefaultPath() string { return filepath.Join(".orch", "orch.db") }

// FindProjectDir is the nearest directory, from start upwards, that holds
// a .orch directory: the project whose database DefaultPath names.
func FindProjectDir(start string) (string, bool) {
	dir, err := filepath.Abs(start)
	if err != nil {
		return "", false
	}
	for {
		if st, err := os.Stat(filepath.Join(dir, ".orch")); err == nil && st.IsDir() {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// Options tune how a database is opened.
type Options struct {
	// Sync is "normal" (the default: WAL with synchronous=NORMAL, durable
	// against a killed process) or "full" (fsync on every commit, durable
	// against a power loss too).
	Sync string
	// LockTimeout is how long a write waits for another process's write
	// lock before it fails with a *LockedError (0: DefaultLockTimeout).
	LockTimeout time.Duration
}

// DB is an open run database. It is safe for concurrent use.
type DB struct {
	path     string
	sql      *sql.DB
	readOnly bool // OpenReadOnly: no queue, no writer, no checkpoints

	// mu guards closed and makes Close wait for callers that are queueing a
	// request, so that nothing is ever sent on a closed queue.
	mu     sync.RWMutex
	closed bool
	queue  chan *request

	closing
	faults
	writing
}

// closing is how a handle ends: its writer and checkpointer stop, once.
type closing struct {
	writerDone     chan struct{}
	checkpointQuit chan struct{}
	checkpointDone chan struct{}
	closeOnce      sync.Once
	closeErr       error
}

// faults are what can go wrong with the file under a handle: a failure to
// store a line, the database made unusable, another process's lock, the
// file deleted or truncated.
type faults struct {
	errMu  sync.Mutex
	logErr error // the first failure to store a logged line since the last Flush

	faultMu sync.Mutex
	fault   error // what made the database unusable: see fault.go

	lockTimeout time.Duration // Options.LockTimeout
	lockWait    lockWait      // the writer's wait for another process's lock
	abandoned   chan struct{} // closed by Abandon
	abandonOnce sync.Once
	file        os.FileInfo // the file opened, which the path must go on naming (gone.go)
	hadHeader   atomic.Bool // the file was seen with SQLite's header (gone.go)
}

// writing is the write side of a handle: the connection, its statements
// and what it keeps between its transactions.
type writing struct {
	// committing is held by whoever commits: the writer goroutine, or a
	// caller committing its lone write itself (commitDirectly). It guards
	// the write connection and what goes with it: stmts, insertSQL, seqs,
	// boards.
	committing sync.Mutex
	// unfinished counts the requests queued and not yet committed; callers
	// counts the goroutines waiting for a commit.
	unfinished, callers atomic.Int64
	stmts               map[string]*sql.Stmt // prepared write statements
	insertSQL           map[insertKey]string // the texts of multi-row INSERTs
	cueSQL              map[uint8]string     // the texts of cue UPDATEs, by the columns they set
	scratch             txnScratch           // a transaction's buffers, kept for the next one (writer.go)
	stats               writerStats

	wconn *sql.Conn // the writer's own connection (writeConn)
	// seqs is what the writer knows of each run it wrote (its last seq),
	// kept between transactions while dataVersion (or the WAL index's change
	// counter, ownChange) says no other connection has written since.
	seqs        map[string]*runSeq
	dataVersion int64
	ownChange   ownChange
	// boards holds, per run, the blackboard as last read (see Blackboard);
	// a run's is dropped when a commit of this handle writes its board.
	boards map[string]cachedBoard
	// walIndex is the -shm file, for the change counter that tells whether
	// another connection has committed (walindex.go); opened on first use,
	// shared by the process's handles on the database.
	walIndex *walIndexFile
	// leases are the runs this handle owns, fenced in every write (see
	// lease.go); leaseVersion is the data_version they were last checked at.
	leases       map[string]*lease
	leaseVersion int64
}

// Open opens (creating it if needed) the run database at path and brings its
// schema up to date. It refuses a database written by a newer orch.
func Open(path string, opts Options) (*DB, error) {
	d, err := open(path, opts)
	if err != nil {
		return nil, fmt.Errorf("opening run database %s: %w", path, err)
	}
	return d, nil
}

func open(path string, opts Options) (*DB, error) {
	if path == "" {
		return nil, errors.New("no path given")
	}
	syncMode := "NORMAL"
	switch strings.ToLower(opts.Sync) {
	case "", "normal":
	case "full":
		syncMode = "FULL"
	default:
		return nil, fmt.Errorf("unknown sync mode %q (want normal or full)", opts.Sync)
	}
	lockTimeout := opts.LockTimeout
	if lockTimeout <= 0 {
		lockTimeout = DefaultLockTimeout
	}
	if err := createFile(path); err != nil {
		return nil, creationError(path, err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	connector := &checkedConnector{dsn: dsn(abs, syncMode, lockTimeout)}
	db := sql.OpenDB(connector)
	// Readers run beside the writer (WAL lets them); a few connections are
	// enough for the CLI and the runner.
	db.SetMaxOpenConns(4)
	db.SetMaxIdleConns(4)
	if err := initialize(db, lockTimeout); err != nil {
		db.Close()
		return nil, explain(err, path)
	}
	file, err := os.Stat(path)
	if err != nil {
		db.Close()
		return nil, err
	}
	d := &DB{
		path:    path,
		sql:     db,
		queue:   make(chan *request, queueSize),
		closing: closing{writerDone: make(chan struct{}), checkpointQuit: make(chan struct{}), checkpointDone: make(chan struct{})},
		faults:  faults{lockTimeout: lockTimeout, abandoned: make(chan struct{}), file: file},
		writing: writing{leaseVersion: -1},
	}
	d.walIndex = useWalIndex(abs + "-shm")
	d.hadHeader.Store(file.Size() >= headerSize)
	connector.handle.Store(d)
	go d.writer()
	go d.checkpointer()
	return d, nil
}

// initialize makes the first connection and migrates the schema. Processes
// that open a new file at once race to switch it to WAL mode, and SQLite
// answers the losers SQLITE_BUSY at once (waiting there could deadlock), so
// they try again for as long as the busy timeout would have waited.
func initialize(db *sql.DB, lockTimeout time.Duration) error {
	deadline := time.Now().Add(lockTimeout)
	for {
		err := migrate(context.Background(), db)
		if err == nil || primaryCode(err) != sqlite3.SQLITE_BUSY || time.Now().After(deadline) {
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// explain adds what to do to an SQLite error that does not say it.
func explain(err error, path string) error {
	err = plain(err, path)
	if primaryCode(err) == sqlite3.SQLITE_READONLY {
		return fmt.Errorf("%w: orch must be able to write the file and to create %s-wal and %s-shm beside it",
			err, filepath.Base(path), filepath.Base(path))
	}
	return err
}

// dsn builds the driver's connection string. _txlock=immediate makes every
// write transaction take the write lock at BEGIN: a deferred transaction that
// upgrades from reading to writing fails with SQLITE_BUSY (the busy timeout
// cannot help it) as soon as another process has committed in between.
func dsn(path, sync string, lockTimeout time.Duration) string {
	// The path is part of a URI: escape what SQLite would read as syntax
	// ('?', '#', '%'); an absolute URI path starts with a slash.
	p := filepath.ToSlash(path)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	q := []string{
		// Open creates the file itself (createFile); a connection the pool
		// opens later must never create it again: after the file was
		// deleted under a run, that made a new empty database at the path,
		// reported as "replaced by another file" (and left behind) instead
		// of "deleted".
		"mode=rw",
		fmt.Sprintf("_pragma=busy_timeout(%d)", lockTimeout.Milliseconds()),
		"_pragma=journal_mode(WAL)",
		"_pragma=synchronous(" + sync + ")",
		"_pragma=foreign_keys(1)",
		"_pragma=temp_store(MEMORY)",
		"_pragma=wal_autocheckpoint(0)", // checkpoints run off the commit path: see checkpoint.go
		"_txlock=immediate",
	}
	return "file:" + (&url.URL{Path: p}).EscapedPath() + "?" + strings.Join(q, "&")
}

// Close waits for everything queued to be committed, stops the writer and
// closes the database. It is safe to call more than once.
func (d *DB) Close() error {
	if d.readOnly {
		return d.closeReadOnly()
	}
	d.closeOnce.Do(func() {
		d.mu.Lock()
		d.closed = true
		close(d.queue)
		d.mu.Unlock()
		<-d.writerDone
		close(d.checkpointQuit)
		<-d.checkpointDone
		_ = d.checkFile()
		if d.stats.transactions.Load() > 0 && d.faulted() == nil && !d.isAbandoned() {
			var q readConn = d.sql
			if d.wconn != nil {
				q = d.wconn
			}
			d.checkpoint(q) // leave a short WAL behind
		}
		err := d.takeLogErr()
		if ferr := d.faulted(); ferr != nil && !errors.Is(err, ferr) {
			err = errors.Join(err, ferr)
		}
		for _, st := range d.stmts {
			st.Close()
		}
		if d.wconn != nil {
			d.wconn.Close()
		}
		if cerr := d.sql.Close(); cerr != nil {
			err = errors.Join(err, cerr)
		}
		d.walIndex.close() // after the connections: see walindex_unix.go
		if err != nil {
			d.closeErr = fmt.Errorf("closing run database %s: %w", d.path, err)
		}
	})
	return d.closeErr
}

// Path is the path the database was opened with.
func (d *DB) Path() string { return d.path }

// micros converts a time to the stored form; the zero time is NULL.
func micros(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMicro()
}

// fromMicros converts a stored time back; NULL is the zero time.
func fromMicros(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return time.UnixMicro(v.Int64).UTC()
}

// now is the current time as it will be read back: UTC, in microseconds.
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }
