package control

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/orch-cli/orch/runner/store"
)

// Config says which run database a Controller serves and how it is opened.
type Config struct {
	// DB is the database a person named (--db, else $ORCH_DB); empty, it
	// is orch.db in the nearest .orch/ directory from here upwards, as git
	// finds its .git.
	DB string
	// Sync is the durability of writes: normal, or full (see store.Options).
	Sync string
	// LockTimeout is how long a write waits for another process's lock
	// (0: the store's default).
	LockTimeout time.Duration
}

// Controller carries out requests on one run database. It opens the
// database read-only at the first read and keeps that handle until Close;
// an action opens it for writing for the time of the action only, so that
// no writer is held between requests. It is safe for concurrent use.
type Controller struct {
	cfg Config

	// HandOverIO is where orch-temporal reads and prints when an action on
	// a run on Temporal is handed over to it (the command line's own
	// streams: its output and exit status are the command's). Nil: its
	// output is captured and becomes the result's message, or the error's.
	HandOverIO *IO
	// Exe is the orch binary a detached continuation runs ("": this
	// process's own executable).
	Exe string
	// Version is orch's, named where orch-temporal is to be installed.
	Version string
	// Notice, when set, is told what a reader should know and would not
	// see otherwise: a Temporal run that could not be caught up (once,
	// until it is again). Any goroutine calls it.
	Notice func(string)

	mu     sync.Mutex
	reader *store.DB
	// caughtUp is when each Temporal run was last caught up (catchUp).
	caughtUp catchUps
}

// IO is a process's standard streams.
type IO struct {
	In       io.Reader
	Out, Err io.Writer
}

// New returns a Controller of the database cfg names; nothing is opened yet.
func New(cfg Config) *Controller { return &Controller{cfg: cfg} }

// Close closes the read-only handle, if one was opened.
func (c *Controller) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reader == nil {
		return nil
	}
	err := c.reader.Close()
	c.reader = nil
	return err
}

// ErrNoDatabase is in the error of a read or action that found no run
// database: no run has been recorded there yet.
var ErrNoDatabase = errors.New("no runs yet")

// Named reports whether the database was named by a person (--db, ORCH_DB)
// rather than found.
func (c *Controller) Named() bool { return c.cfg.DB != "" }

// Path is the run database reads and actions use: the one named, else the
// nearest .orch/orch.db from the current directory upwards; with none,
// ./.orch/orch.db (which a read reports missing).
func (c *Controller) Path() string {
	if c.cfg.DB != "" {
		return c.cfg.DB
	}
	if dir, ok := store.FindProjectDir("."); ok {
		return filepath.Join(dir, store.DefaultPath())
	}
	return store.DefaultPath()
}

// RunPath is the database orch run records a run of cuelist in: the one
// Path finds, else the one in the nearest .orch/ above the cuelist, else a
// new .orch/ next to the cuelist (the project's directory, wherever orch is
// run from).
func (c *Controller) RunPath(cuelist string) string {
	if c.cfg.DB != "" {
		return c.cfg.DB
	}
	if dir, ok := store.FindProjectDir("."); ok {
		return filepath.Join(dir, store.DefaultPath())
	}
	dir := cuelist
	if st, err := os.Stat(cuelist); err != nil || !st.IsDir() {
		dir = filepath.Dir(cuelist)
	}
	if found, ok := store.FindProjectDir(dir); ok {
		dir = found
	}
	return filepath.Join(dir, store.DefaultPath())
}

// open opens (creating it if need be) the run database at path for
// writing; it returns the absolute path too.
func (c *Controller) open(path string) (*store.DB, string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, "", err
	}
	db, err := store.Open(abs, store.Options{Sync: c.cfg.Sync, LockTimeout: c.cfg.LockTimeout})
	if err != nil {
		return nil, "", Damaged(path, err)
	}
	return db, abs, nil
}

// writer opens the existing run database for writing (it migrates an
// older schema); it never creates one. The caller closes it.
func (c *Controller) writer() (*store.DB, error) {
	path, err := c.existing()
	if err != nil {
		return nil, err
	}
	db, _, err := c.open(path)
	return db, openFailed(err)
}

// Reader is the run database opened read-only (it works on a file this
// process cannot write, and never migrates or writes it), kept open for the
// Controller's reads until Close.
func (c *Controller) Reader() (*store.DB, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reader != nil {
		return c.reader, nil
	}
	path, err := c.existing()
	if err != nil {
		return nil, err
	}
	db, err := store.OpenReadOnly(path)
	if errors.Is(err, store.ErrNoTables) { // made by an orch run that has not written yet
		return nil, &Error{Kind: NotFound, Err: fmt.Errorf("%w: the run database %s has no tables yet (orch run creates them)", ErrNoDatabase, path)}
	}
	if err != nil {
		return nil, openFailed(Damaged(path, err))
	}
	c.reader = db
	return db, nil
}

// existing is the path of the run database, or an error wrapping
// ErrNoDatabase saying where none was found.
func (c *Controller) existing() (string, error) {
	path := c.Path()
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		return path, nil
	}
	var why error
	switch abs, _ := filepath.Abs(path); {
	case c.Named():
		why = fmt.Errorf("%w: the run database %s does not exist (orch run creates it)", ErrNoDatabase, path)
	case hasProject():
		why = fmt.Errorf("%w: the run database %s does not exist (orch run creates it)", ErrNoDatabase, abs)
	default:
		cwd, _ := os.Getwd()
		why = fmt.Errorf("%w: no .orch directory in %s or above (orch run creates one next to its cuelist: run this there, or give --db or ORCH_DB)", ErrNoDatabase, cwd)
	}
	return "", &Error{Kind: NotFound, Err: why}
}

func hasProject() bool {
	_, ok := store.FindProjectDir(".")
	return ok
}

// openFailed is the error of a database that could not be opened: one
// that is not there is NotFound, one that is damaged is no mistake of the
// caller's (Failed), and any other (not a database orch can use) is Invalid.
func openFailed(err error) error {
	var e *Error
	if err == nil || errors.As(err, &e) || errors.Is(err, store.ErrDamaged) {
		return err
	}
	return &Error{Kind: Invalid, Err: err}
}

// DamagedError is a read or write that found the run database damaged: it
// says so first, with what is wrong, and what to do.
type DamagedError struct {
	Path, What string
	Err        error
}

func (e *DamagedError) Error() string {
	return fmt.Sprintf("the database %s is damaged: %s; its runs cannot be read (move it and its -wal and -shm files aside: orch run starts a new database)",
		e.Path, e.What)
}

func (e *DamagedError) Unwrap() error { return e.Err }

// Damaged turns an error that found the database at path damaged into a
// *DamagedError, saying what SQLite's quick_check finds; other errors pass.
func Damaged(path string, err error) error {
	var de *DamagedError
	if !errors.Is(err, store.ErrDamaged) || errors.As(err, &de) {
		return err
	}
	return &DamagedError{Path: path, What: store.Diagnose(path, err), Err: err}
}

// resolve turns ref (an id, a unique prefix, or "last") into a run id; a
// run that does not exist is NotFound.
func resolve(ctx context.Context, db *store.DB, ref string) (string, error) {
	id, err := db.ResolveRun(ctx, ref)
	if err != nil && !errors.Is(err, store.ErrDamaged) {
		return "", &Error{Kind: NotFound, Err: err}
	}
	return id, err
}

// Resolve turns ref (an id, a unique prefix, or "last") into a run id.
func (c *Controller) Resolve(ctx context.Context, ref string) (string, error) {
	db, err := c.Reader()
	if err != nil {
		return "", err
	}
	id, err := resolve(ctx, db, ref)
	return id, c.damaged(err)
}

func (c *Controller) damaged(err error) error { return Damaged(c.Path(), err) }

// reading calls f with the read-only database and the run ref names.
func (c *Controller) reading(ctx context.Context, ref string, f func(db *store.DB, id string) error) error {
	db, err := c.Reader()
	if err != nil {
		return err
	}
	id, err := resolve(ctx, db, ref)
	if err != nil {
		return c.damaged(err)
	}
	return c.damaged(f(db, id))
}

// writing calls f with the database, open for writing for the time of the
// call, and the run ref names.
func (c *Controller) writing(ctx context.Context, ref string, f func(db *store.DB, id string) error) error {
	db, err := c.writer()
	if err != nil {
		return err
	}
	defer db.Close()
	id, err := resolve(ctx, db, ref)
	if err != nil {
		return c.damaged(err)
	}
	return c.damaged(f(db, id))
}

// writerOn opens the database for writing and resolves ref, for an action
// that may hand the open database on (an Execution); the caller closes it
// otherwise.
func (c *Controller) writerOn(ctx context.Context, ref string) (*store.DB, string, error) {
	db, err := c.writer()
	if err != nil {
		return nil, "", err
	}
	id, err := resolve(ctx, db, ref)
	if err != nil {
		db.Close()
		return nil, "", c.damaged(err)
	}
	return db, id, nil
}

// Watch reports commits to the run database by any process (see
// store.Watch), through the read-only handle: a follower of the run list
// reads it again only when something was written.
func (c *Controller) Watch(ctx context.Context) (*store.Watch, error) {
	db, err := c.Reader()
	if err != nil {
		return nil, err
	}
	return db.Watch(ctx)
}

// IsDamaged reports whether err found the run database damaged: no
// mistake of the caller's, nor a refusal.
func IsDamaged(err error) bool { return errors.Is(err, store.ErrDamaged) }
