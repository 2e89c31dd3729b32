//go:build unix && !bare

package main

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"modernc.org/sqlite"
)

// A recorder is the floor under orch's figures (issue 34): the cheapest
// orchestrator that keeps orch's rule, commit-before-GO. Before each fork it
// commits that the child is about to start, with the end of the worker's
// previous child in the same transaction (the next start is decided by that
// end, so recording them together loses nothing and is what orch's chained
// commit does); each worker's last end gets a transaction of its own. So a
// run of n children commits n+p transactions, one before every fork: no
// orchestrator under the rule can commit fewer.
//
// The database is opened as runner/store opens orch's: the same pure-Go
// driver (modernc.org/sqlite) and DSN pragmas (WAL, synchronous=NORMAL,
// foreign_keys, temp_store=MEMORY, wal_autocheckpoint=0, _txlock=immediate),
// one write connection with its statements prepared once and BEGIN
// IMMEDIATE/COMMIT issued on it, and a goroutine that runs a PASSIVE
// checkpoint every 100 ms when something was committed (and one at the
// end, on the write connection), as the store's checkpointer and Close do.
// Left out: the store's writer goroutine and group commit (a mutex
// serializes the workers' commits instead), its look at the file before
// each checkpoint, and the reads it makes only when another process wrote.
type recorder struct {
	db    *sql.DB
	conn  *sql.Conn // the write connection
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
	rows  rows
	// commits counts the transactions, for the checkpointer.
	commits        int64
	checkpointQuit chan struct{}
	checkpointDone chan struct{}
}

// rows is what a recorder writes: before a fork, the end of the worker's
// previous child (prev < 0: none) and the start of child i; at the end,
// each worker's last end; end closes the run.
type rows interface {
	schema() string
	begin(r *recorder, n int) error
	decision(r *recorder, prev int, prevPID, prevExit int, i int) error
	last(r *recorder, prev int, prevPID, prevExit int) error
	end(r *recorder) error
}

// recordFile is the database a recorder opens in its directory.
const recordFile = "spawn.db"

// openRecorder opens (creating it if needed) the database in dir for n
// children, with the rows shape says: "min" or "orch".
func openRecorder(dir, shape string, n int) (*recorder, error) {
	var rs rows
	switch shape {
	case "min":
		rs = &minRows{run: time.Now().UnixNano()}
	case "orch":
		rs = &orchRows{run: strconv.FormatInt(time.Now().UnixNano(), 16), inserts: map[int]string{}}
	default:
		return nil, fmt.Errorf("unknown -rows %q (want min or orch)", shape)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(filepath.Join(dir, recordFile))
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(connector(dsn(abs)))
	db.SetMaxOpenConns(2) // the writer's and the checkpointer's
	db.SetMaxIdleConns(2)
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, rs.schema()); err != nil {
		db.Close()
		return nil, fmt.Errorf("creating the tables of %s: %w", abs, err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, err
	}
	r := &recorder{db: db, conn: conn, rows: rs, stmts: map[string]*sql.Stmt{},
		checkpointQuit: make(chan struct{}), checkpointDone: make(chan struct{})}
	go r.checkpointer()
	if err := r.commit(func() error { return rs.begin(r, n) }); err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

// connector opens connections with the driver itself, as the store's
// checkedConnector does (without its look at the file).
type connector string

var sqliteDriver = &sqlite.Driver{}

func (c connector) Connect(context.Context) (driver.Conn, error) { return sqliteDriver.Open(string(c)) }

func (c connector) Driver() driver.Driver { return sqliteDriver }

// dsn is runner/store's (store.go), but for mode=rwc: the store creates
// its file itself before it opens it.
func dsn(path string) string {
	q := []string{
		"mode=rwc",
		"_pragma=busy_timeout(10000)",
		"_pragma=journal_mode(WAL)",
		"_pragma=synchronous(NORMAL)",
		"_pragma=foreign_keys(1)",
		"_pragma=temp_store(MEMORY)",
		"_pragma=wal_autocheckpoint(0)",
		"_txlock=immediate",
	}
	return "file:" + (&url.URL{Path: filepath.ToSlash(path)}).EscapedPath() + "?" + strings.Join(q, "&")
}

// before commits, before child i is forked, the end of the worker's
// previous child (prev < 0: none) and the start of i.
func (r *recorder) before(prev, prevPID, prevExit, i int) error {
	return r.commit(func() error { return r.rows.decision(r, prev, prevPID, prevExit, i) })
}

// after commits a worker's last end.
func (r *recorder) after(prev, prevPID, prevExit int) error {
	return r.commit(func() error { return r.rows.last(r, prev, prevPID, prevExit) })
}

// commit runs write in one transaction on the write connection.
func (r *recorder) commit(write func() error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.exec("BEGIN IMMEDIATE"); err != nil {
		return err
	}
	if err := write(); err != nil {
		r.conn.ExecContext(context.Background(), "ROLLBACK")
		return err
	}
	if err := r.exec("COMMIT"); err != nil {
		r.conn.ExecContext(context.Background(), "ROLLBACK")
		return err
	}
	r.commits++
	return nil
}

// exec runs query, prepared once on the write connection.
func (r *recorder) exec(query string, args ...any) error {
	st := r.stmts[query]
	if st == nil {
		var err error
		if st, err = r.conn.PrepareContext(context.Background(), query); err != nil {
			return err
		}
		r.stmts[query] = st
	}
	_, err := st.ExecContext(context.Background(), args...)
	return err
}

// checkpointer folds the WAL back into the file every 100 ms when
// something was committed since the last time, off the commits' path.
func (r *recorder) checkpointer() {
	defer close(r.checkpointDone)
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	var last int64
	for {
		select {
		case <-r.checkpointQuit:
			return
		case <-t.C:
		}
		r.mu.Lock()
		n := r.commits
		r.mu.Unlock()
		if n != last {
			last = n
			r.checkpoint(r.db)
		}
	}
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (r *recorder) checkpoint(q querier) error {
	var busy, frames, copied int64
	return q.QueryRowContext(context.Background(), "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &copied)
}

// finish commits the run's end, checkpoints and closes.
func (r *recorder) finish() error {
	err := r.commit(func() error { return r.rows.end(r) })
	if cerr := r.close(); err == nil {
		err = cerr
	}
	return err
}

func (r *recorder) close() error {
	close(r.checkpointQuit)
	<-r.checkpointDone
	err := r.checkpoint(r.conn) // leave a short WAL behind, as the store's Close does
	for _, st := range r.stmts {
		st.Close()
	}
	r.conn.Close()
	if cerr := r.db.Close(); err == nil {
		err = cerr
	}
	return err
}

func now() int64 { return time.Now().UnixMicro() }

// spawnRecorded is main's loop with a recorder's commits around each child.
func spawnRecorded(n, p int, argv []string, dir, shape string) {
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "spawn:", err)
		os.Exit(1)
	}
	start := time.Now()
	rec, err := openRecorder(dir, shape, n)
	if err != nil {
		fail(err)
	}
	jobs := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < p; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			prev, pid, exit := -1, 0, 0
			for i := range jobs {
				if err := rec.before(prev, pid, exit, i); err != nil {
					fail(err)
				}
				cmd := exec.Command(argv[0], argv[1:]...)
				cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
				if err := cmd.Run(); err != nil {
					fail(err)
				}
				prev, pid, exit = i, cmd.Process.Pid, cmd.ProcessState.ExitCode()
			}
			if prev >= 0 {
				if err := rec.after(prev, pid, exit); err != nil {
					fail(err)
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if err := rec.finish(); err != nil {
		fail(err)
	}
	fmt.Printf("%d processes, %d at a time, recorded (%s rows): %.3fs\n", n, p, shape, time.Since(start).Seconds())
}
