package store

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	sqlite3 "modernc.org/sqlite/lib"

	"github.com/orch-cli/orch/runner/record"
)

const (
	// queueSize bounds the requests waiting for the writer. When it is full,
	// Log blocks: a slow disk slows the agents' output down rather than
	// losing any of it.
	queueSize = 4096
	// maxBatch caps the rows of one transaction, so that one commit stays
	// short and a burst is spread over several.
	maxBatch = 2000
	// maxBatchBytes caps the agents' output and values of one transaction
	// (a line may be 1 MiB): another process waits for a commit at most
	// that long.
	maxBatchBytes = 4 << 20
)

type requestKind int

const (
	kindAppend requestKind = iota
	kindLog
	kindBlackboard
	kindAddCommand
	kindCommandDone
	kindFlush
	kindClaim
	kindHeartbeat
	kindMemory
)

// request is one caller's write, queued for the writer. The writer fills the
// result fields (seq in events, version, id) inside the transaction; the
// caller reads them only after done says the transaction committed.
type request struct {
	kind   requestKind
	events []prepared       // kindAppend
	line   record.LogLine   // kindLog
	bb     blackboardWrite  // kindBlackboard
	cmd    record.Command   // kindAddCommand
	id     int64            // kindAddCommand: the new id; kindCommandDone: the command
	done   chan error       // nil when nobody waits (Log)
	result blackboardResult // kindBlackboard
	runID  string           // kindClaim, kindHeartbeat
	claim  record.Owner     // kindClaim: the new owner; kindHeartbeat: its token
	mem    memoryWrite      // kindMemory
}

func (r *request) rows() int {
	switch r.kind {
	case kindAppend:
		return len(r.events)
	case kindBlackboard:
		return 2 * len(r.bb.puts) // a value and its event each
	case kindFlush:
		return 0
	}
	return 1
}

// size is about how many bytes of text r writes beyond its rows.
func (r *request) size() int {
	switch r.kind {
	case kindLog:
		return len(r.line.Text)
	case kindBlackboard:
		n := 0
		for _, p := range r.bb.puts {
			n += len(p.Value)
		}
		return n
	}
	return 0
}

// writerStats counts what the writer committed; tests use it to see that
// concurrent callers share transactions.
type writerStats struct {
	sent         atomic.Int64 // requests handed to the writer, queued or committed directly
	transactions atomic.Int64
	requests     atomic.Int64
	versionReads atomic.Int64 // transactions that asked PRAGMA data_version (knownRuns)
	values       atomic.Int64 // values bound to the writer's statements: each costs a conversion and a bind
	eventReads   atomic.Int64 // Events calls that queried the store (noEventsAfter could not answer)
}

// send queues r. It blocks while the queue is full; a caller with a context
// gives up when it is done.
func (d *DB) send(ctx context.Context, r *request) error {
	if d.readOnly {
		return ErrReadOnly
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return ErrClosed
	}
	if ctx.Err() != nil {
		return d.givenUp(ctx, false) // never queue a write the caller has given up on
	}
	d.unfinished.Add(1)
	select {
	case d.queue <- r:
		d.stats.sent.Add(1)
		return nil
	case <-ctx.Done():
		d.unfinished.Add(-1)
		return d.givenUp(ctx, false)
	}
}

// do commits r and waits for the commit: at once in the caller's goroutine
// when nobody else is writing, else through the queue.
func (d *DB) do(ctx context.Context, r *request) error {
	if d.readOnly {
		return ErrReadOnly
	}
	if err := d.faulted(); err != nil {
		return err
	}
	d.callers.Add(1)
	defer d.callers.Add(-1)
	if ok, err := d.commitDirectly(ctx, r); ok {
		return err
	}
	r.done = make(chan error, 1) // only a queued write is told through it
	if err := d.send(ctx, r); err != nil {
		return err
	}
	return d.wait(ctx, r)
}

// commitDirectly commits r in the caller's goroutine when it is the only
// caller and no other write is queued or being committed, and reports
// whether it did, with the commit's error. Handing a lone write to the writer goroutine and being
// woken by it costs two goroutine switches, a tenth of a decision's commit
// here; a decision waits for its commit, so the run's critical path pays
// them. Everything sent before r is committed first (the queue is empty), so
// the order of writes holds. With other callers about, r goes through the
// queue: there it shares a transaction with theirs; so it does when another
// process holds the write lock (only the writer waits for it).
func (d *DB) commitDirectly(ctx context.Context, r *request) (bool, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed || ctx.Err() != nil || d.callers.Load() != 1 || !d.committing.TryLock() {
		return false, nil // send reports a closed database or a done context
	}
	defer d.committing.Unlock()
	if d.unfinished.Load() != 0 {
		return false, nil
	}
	_, err := d.tryCommit([]*request{r})
	if errors.Is(err, errLockBusy) {
		return false, nil
	}
	d.stats.sent.Add(1)
	return true, d.outcome(err) // a batch of one: settle's answer, whichever request failed
}

// wait waits for the commit of r, queued with a done channel.
func (d *DB) wait(ctx context.Context, r *request) error {
	select {
	case err := <-r.done:
		return err
	case <-ctx.Done():
		select {
		case err := <-r.done: // committed just as the context ended: say so
			return err
		default:
		}
		return d.givenUp(ctx, true)
	}
}

// givenUp is the error of a write whose caller's ctx ended before it was
// committed (queued: it may still be), saying why: another process's lock
// when the writer is waiting for it.
func (d *DB) givenUp(ctx context.Context, queued bool) error {
	how := "not recorded"
	if queued {
		how = "the write may still be recorded"
	}
	if since, ok := d.lockWait.waiting(); ok {
		return fmt.Errorf("%w (%s)", d.lockedError(since, context.Cause(ctx)), how)
	}
	return fmt.Errorf("%w while waiting for the commit (%s)", context.Cause(ctx), how)
}

// Append commits events, and their effect on the run's state, in one
// transaction before it returns. It assigns each event its Seq and writes
// them back into events with their At as stored (UTC, in microseconds; now
// when it had none): an event shown as it is committed reads as the log does.
func (d *DB) Append(ctx context.Context, events ...record.Event) error {
	if len(events) == 0 {
		return nil
	}
	r := &request{kind: kindAppend, events: make([]prepared, len(events))}
	for i, ev := range events {
		rec, err := prepareEvent(ev)
		if err != nil {
			return fmt.Errorf("recording %s event of run %q: %w", ev.Type, ev.RunID, err)
		}
		r.events[i] = rec
	}
	if err := d.do(ctx, r); err != nil {
		return err
	}
	for i := range events {
		events[i].Seq = r.events[i].seq
		events[i].At = time.UnixMicro(r.events[i].at).UTC()
	}
	return nil
}

// Log queues a line of agent output; Flush waits for it. It never drops a
// line: when the queue is full it waits for room. A line that cannot be
// stored makes the next Flush (or Close) fail.
func (d *DB) Log(line record.LogLine) {
	if line.At.IsZero() {
		line.At = time.Now()
	}
	if line.RunID == "" {
		d.setLogErr(errors.New("storing agent output: a line has no run id"))
		return
	}
	if err := d.send(context.Background(), &request{kind: kindLog, line: line}); err != nil {
		d.setLogErr(fmt.Errorf("storing agent output of run %s: %w", line.RunID, err))
	}
}

// Flush waits until everything queued before it is committed. It reports
// the first line of output that could not be stored since the last Flush.
func (d *DB) Flush(ctx context.Context) error {
	if err := d.checkFile(); err != nil {
		return err
	}
	if err := d.do(ctx, &request{kind: kindFlush}); err != nil {
		return err
	}
	return d.takeLogErr()
}

func (d *DB) setLogErr(err error) {
	d.errMu.Lock()
	defer d.errMu.Unlock()
	if d.logErr == nil {
		d.logErr = err
	}
}

func (d *DB) takeLogErr() error {
	d.errMu.Lock()
	defer d.errMu.Unlock()
	err := d.logErr
	d.logErr = nil
	return err
}

// writer commits what is queued. It takes up to maxBatch rows (and
// maxBatchBytes of text) and commits them in one transaction: while one
// transaction commits, the next batch gathers, so the batches grow with
// the load by themselves. It shares the write connection with
// commitDirectly through d.committing.
func (d *DB) writer() {
	defer close(d.writerDone)
	var batch []*request
	for r := range d.queue {
		// The lock first: what queues while a direct commit holds it joins
		// this batch.
		d.committing.Lock()
		batch = append(batch[:0], r)
		rows, size := r.rows(), r.size()
		yielded := false
	gather:
		for rows < maxBatch && size < maxBatchBytes {
			select {
			case r, ok := <-d.queue:
				if !ok {
					break gather
				}
				batch = append(batch, r)
				rows, size = rows+r.rows(), size+r.size()
			default:
				// Callers woken by the last commit are usually about to
				// queue their next write: let them run once before BEGIN.
				// This alone doubles the events per transaction under load
				// and costs nothing when nobody else is runnable.
				if yielded {
					break gather
				}
				runtime.Gosched()
				yielded = true
			}
		}
		d.commit(batch)
		d.committing.Unlock()
		d.unfinished.Add(-int64(len(batch)))
		clear(batch) // let the requests be collected
	}
}

// commit writes batch and wakes its callers. While another process holds
// the write lock it waits for it, for at most the lock timeout (see
// lock.go): counted from the first write that found it taken, so the
// writes queued behind one that timed out fail at their first try, until
// the lock is free again.
func (d *DB) commit(batch []*request) {
	for len(batch) > 0 {
		bad, err := d.tryCommit(batch)
		if errors.Is(err, errLockBusy) {
			if err = d.waitForLock(d.lockWait.start(time.Now())); err == nil {
				continue
			}
		} else {
			d.lockWait.end()
		}
		batch = d.settle(batch, bad, err)
	}
}

// waitForLock lets go of the write connection between two tries of
// BEGIN IMMEDIATE (a read on it goes first), unless the write has waited
// for the lock timeout or was abandoned.
func (d *DB) waitForLock(since time.Time) error {
	if d.isAbandoned() {
		return ErrAbandoned
	}
	if time.Since(since) >= d.lockTimeout {
		return d.lockedError(since, nil)
	}
	d.committing.Unlock()
	runtime.Gosched()
	d.committing.Lock()
	return nil
}

// settle wakes the callers of batch that tryCommit answered with err (of
// request bad; -1: of the transaction) and returns the requests to try
// again. When one request fails, it alone gets the error and the others are
// tried again without it, so a bad write never fails an innocent one; when
// the commit itself fails, or the request failed because of the file or the
// disk (full, read-only, damaged: the others would fail the same way, one
// retry each), every caller of the batch gets the error.
func (d *DB) settle(batch []*request, bad int, err error) []*request {
	var fe *FileError
	if err == nil || bad < 0 || errors.As(d.plain(err), &fe) {
		for _, r := range batch {
			d.finish(r, err)
		}
		return nil
	}
	d.finish(batch[bad], err)
	return slices.Delete(slices.Clone(batch), bad, bad+1)
}

func (d *DB) finish(r *request, err error) {
	err = d.outcome(err)
	if r.done != nil {
		r.done <- err
	} else if err != nil {
		d.setLogErr(err)
	}
}

// outcome is what the caller of a write is told of its commit's error; a
// damaged database faults the handle.
func (d *DB) outcome(err error) error {
	if err = d.plain(err); errors.Is(err, ErrDamaged) {
		d.setFault(err)
	}
	return err
}

// errLockBusy: BEGIN IMMEDIATE found the write lock taken, for lockPoll.
var errLockBusy = errors.New("the write lock is busy")

// tryCommit applies batch in one transaction. It returns the index of the
// request that failed, or -1 with the error of BEGIN or COMMIT; errLockBusy
// when another process holds the write lock.
func (d *DB) tryCommit(batch []*request) (int, error) {
	if !slices.ContainsFunc(batch, func(r *request) bool { return r.kind != kindFlush }) {
		return -1, nil
	}
	if d.isAbandoned() {
		return -1, ErrAbandoned
	}
	// Not the callers' contexts: the batch is theirs together, and a commit
	// that has begun should finish.
	ctx := context.Background()
	conn, err := d.writeConn(ctx)
	if err != nil {
		return -1, fmt.Errorf("starting a write to %s: %w", d.path, err)
	}
	// The writer owns its connection, so it issues BEGIN and COMMIT itself
	// and runs the statements prepared on that connection in between:
	// database/sql's Tx would prepare them again for every transaction.
	// IMMEDIATE takes the write lock at once (waiting up to busy_timeout), so
	// another process's writer never turns this one's reads stale.
	d.scratch.reset()
	t := &txn{ctx: ctx, d: d, now: now(), txnScratch: &d.scratch}
	if _, err := t.exec("BEGIN IMMEDIATE"); err != nil {
		if primaryCode(err) == sqlite3.SQLITE_BUSY {
			return -1, errLockBusy
		}
		return -1, fmt.Errorf("starting a write to %s: %w", d.path, err)
	}
	// The WAL index's header under the write lock: whether anyone else has
	// committed since this handle's last commit (knownRuns), and what the
	// boards in memory are carried over the commit from. Only a handle that
	// keeps boards reads it: the -shm is opened by the first board read, and
	// no other handle opens it (see walindex.go: closing it drops SQLite's
	// locks on the file).
	var hdr [walIndexHeader / 2]byte
	var changeOK bool
	if len(d.boards) > 0 {
		hdr, changeOK = d.walHeader()
	}
	change := binary.NativeEndian.Uint32(hdr[8:12])
	if err := t.knownRuns(hdr, changeOK); err != nil {
		d.rollback(conn)
		return -1, fmt.Errorf("starting a write to %s: %w", d.path, err)
	}
	if err := t.checkLeases(); err != nil {
		d.rollback(conn)
		return -1, err
	}
	for i, r := range batch {
		if err := t.apply(r); err != nil {
			d.rollback(conn)
			return i, err
		}
	}
	if _, err := t.exec("COMMIT"); err != nil {
		d.rollback(conn)
		return -1, fmt.Errorf("committing to %s: %w", d.path, err)
	}
	t.commitLeases()
	d.afterCommit(change, changeOK, t.wrote)
	d.stats.transactions.Add(1)
	d.stats.requests.Add(int64(len(batch)))
	return -1, nil
}

// txnScratch is what a transaction builds its statements in. The writer
// keeps it (under committing) from one transaction to the next: a chained
// cue's decision would otherwise allocate its map, its rows and arguments
// and each cue's changes again, on the run's critical path.
type txnScratch struct {
	rows     []*prepared              // event rows of the current request, written by flushRows
	cues     map[[2]string]*cueUpdate // cue changes of the current request, by (run, cue)
	cueOrder [][2]string
	spare    []*cueUpdate // cueUpdates of earlier requests, for cue to take again
	args     []any        // a statement's arguments, while it is built
}

// reset empties s of whatever a request that failed half-way left in it.
func (s *txnScratch) reset() {
	clear(s.rows)
	s.rows = s.rows[:0]
	s.releaseCues()
}

// releaseCues forgets the request's cue changes, keeping their memory
// for requests of a decision's size; a run's start or end (every cue at
// once) leaves its map to the collector rather than be cleared every time.
func (s *txnScratch) releaseCues() {
	const keep = 64
	if len(s.cueOrder) > keep {
		s.cues, s.cueOrder = nil, nil
		return
	}
	for _, key := range s.cueOrder {
		if len(s.spare) < keep {
			s.spare = append(s.spare, s.cues[key])
		}
	}
	clear(s.cues)
	s.cueOrder = s.cueOrder[:0]
}

// takeArgs returns s's argument buffer, empty; giveArgs hands it back
// cleared (the values are not kept alive until the next statement).
func (s *txnScratch) takeArgs() []any { return s.args[:0] }
func (s *txnScratch) giveArgs(args []any) {
	clear(args)
	s.args = args[:0]
}

// txn is one write transaction of the writer.
type txn struct {
	ctx  context.Context
	d    *DB
	runs map[string]*runSeq // what this transaction knows of each run it wrote
	now  time.Time          // when the transaction began

	*txnScratch         // rows, cue changes and arguments of the current request
	bbRows      []bbRow // blackboard rows of the current request, written by flushBlackboard
	// bbVersions is the latest version (and its author) of each blackboard
	// key this transaction wrote, by (run, key), so a burst of writes to
	// one key reads its version once.
	bbVersions map[[2]string]bbLatest

	dataVersion  int64             // PRAGMA data_version under this transaction's write lock
	leaseChanges map[string]string // runs this transaction claimed (token) or released ("")
	wrote        bool              // a statement changed a row: the commit writes to the WAL
}

func (t *txn) apply(r *request) error {
	switch r.kind {
	case kindAppend:
		if err := t.fenceEvents(r.events); err != nil {
			return err
		}
		for i := range r.events {
			if err := t.applyEvent(&r.events[i]); err != nil {
				ev := r.events[i].ev
				return fmt.Errorf("recording %s event of run %s: %w", ev.Type, ev.RunID, err)
			}
		}
		if err := t.flushRequest(); err != nil {
			return fmt.Errorf("recording events of run %s: %w", r.events[0].ev.RunID, err)
		}
	case kindLog:
		return t.insertLog(&r.line)
	case kindBlackboard:
		if err := t.fence(r.bb.runID); err != nil {
			return err
		}
		if err := t.writeBlackboard(r); err != nil {
			return err
		}
		return t.flushRequest()
	case kindAddCommand:
		return t.addCommand(r)
	case kindCommandDone:
		if err := t.fenceCommand(r.id); err != nil {
			return err
		}
		return t.commandDone(r.id)
	case kindClaim:
		return t.claim(r)
	case kindHeartbeat:
		return t.heartbeat(r)
	case kindMemory:
		if err := t.fence(r.mem.item.RunID); err != nil {
			return err
		}
		return t.writeMemory(&r.mem)
	}
	return nil
}

// fenceEvents fences each run the events are of (usually one).
func (t *txn) fenceEvents(events []prepared) error {
	for i := range events {
		if id := events[i].ev.RunID; i == 0 || id != events[i-1].ev.RunID {
			if err := t.fence(id); err != nil {
				return err
			}
		}
	}
	return nil
}

// exec runs one statement of the transaction. Statements are prepared once
// per *DB and bound to each transaction, so a batch does not compile its SQL
// again for every row.
func (t *txn) exec(query string, args ...any) (sql.Result, error) {
	st, err := t.stmt(query)
	if err != nil {
		return nil, err
	}
	t.d.stats.values.Add(int64(len(args)))
	res, err := st.ExecContext(t.ctx, args...)
	if err == nil && !t.wrote && query != "BEGIN IMMEDIATE" && query != "COMMIT" {
		// Only an INSERT, UPDATE or DELETE sets the count it reads.
		t.wrote = rowsAffected(res) > 0
	}
	return res, err
}

func (t *txn) queryRow(query string, args ...any) *sql.Row {
	st, err := t.stmt(query)
	if err != nil {
		// An unprepared query reports the same error from Scan.
		return t.d.wconn.QueryRowContext(t.ctx, query, args...)
	}
	return st.QueryRowContext(t.ctx, args...)
}

// stmt returns the statement prepared once on the writer's connection.
func (t *txn) stmt(query string) (*sql.Stmt, error) { return t.d.prepared(t.ctx, query) }

// knownRuns gives the transaction what the writer knew of the runs after its
// last commit, unless another connection has written since: its PRAGMA
// data_version, read under the write lock, changes exactly then. So the
// usual transaction reads no run's last seq, and a run another process
// appended to is read again. When the WAL index's header (hdr, read under
// the write lock) is where this handle's last commit left it, nobody else
// has committed since (walindex.go, ownChange): data_version is what it
// was, and the statement is not run (one of a chained cue's few per commit).
func (t *txn) knownRuns(hdr [walIndexHeader / 2]byte, hdrOK bool) error {
	d := t.d
	if hdrOK && d.seqs != nil && d.ownChange.known && hdr == d.ownChange.hdr {
		t.dataVersion, t.runs = d.dataVersion, d.seqs
		return nil
	}
	d.stats.versionReads.Add(1)
	var v int64
	if err := t.queryRow("PRAGMA data_version").Scan(&v); err != nil {
		return err
	}
	t.dataVersion = v
	if d.seqs == nil || v != d.dataVersion {
		d.seqs, d.dataVersion = map[string]*runSeq{}, v
	}
	t.runs = d.seqs
	return nil
}

// rollback ends a failed transaction; if even that fails, the connection is
// dropped so the next transaction starts on a fresh one. What the writer
// knew of the runs went with the transaction's changes.
func (d *DB) rollback(conn *sql.Conn) {
	d.seqs = nil
	d.ownChange.known = false
	clear(d.boards)
	d.leaseVersion = -1 // a new connection counts data_version anew
	if _, err := conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
		for _, st := range d.stmts {
			st.Close()
		}
		d.stmts = nil
		conn.Close()
		d.wconn = nil
	}
}

// prepared returns the *DB-wide prepared statement for query. Only the
// holder of d.committing calls it, so the cache needs no lock of its own.
func (d *DB) prepared(ctx context.Context, query string) (*sql.Stmt, error) {
	if st := d.stmts[query]; st != nil {
		return st, nil
	}
	conn, err := d.writeConn(ctx)
	if err != nil {
		return nil, err
	}
	st, err := conn.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if d.stmts == nil {
		d.stmts = map[string]*sql.Stmt{}
	}
	d.stmts[query] = st
	return st, nil
}

// rowsAffected reports how many rows an UPDATE changed; on error it says 0
// and the caller reports the missing row.
func rowsAffected(res sql.Result) int64 {
	n, err := res.RowsAffected()
	if err != nil {
		return 0
	}
	return n
}

// writeConn is the one connection every write goes through. Writing through
// a single connection keeps its page cache warm: SQLite empties a
// connection's cache whenever another connection changed the database, and
// the writer hopping between pooled connections would re-read its pages from
// disk on every transaction.
func (d *DB) writeConn(ctx context.Context) (*sql.Conn, error) {
	if d.wconn != nil {
		return d.wconn, nil
	}
	conn, err := d.sql.Conn(ctx)
	if err != nil {
		return nil, err
	}
	// BEGIN IMMEDIATE waits for another process's lock this long at most
	// (see lock.go); the writer then tries again.
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout = %d", lockPoll.Milliseconds())); err != nil {
		conn.Close()
		return nil, err
	}
	d.wconn = conn
	return conn, nil
}
