package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/orch-cli/orch/control"
	"github.com/orch-cli/orch/runner/store"
)

// factory resolves what every command shares, once and lazily (GitHub
// CLI's cmdutil.Factory): the streams, and the run database's Controller
// from the global flags --db, --sync and --lock-timeout and the
// environment. run closes it when the command is done.
type factory struct {
	io *streams

	// The global flags, bound by newRootCmd; flags says which were set.
	db, sync    string
	lockTimeout time.Duration
	flags       *pflag.FlagSet

	// defaultDB is the database when neither --db nor ORCH_DB names one
	// ("": the nearest .orch/ from here up, as control finds it).
	defaultDB string

	ctl *control.Controller
	err error
}

func newFactory(io *streams) *factory { return &factory{io: io} }

// Controller is the run database's Controller, made at the first call.
func (f *factory) Controller() (*control.Controller, error) {
	if f.ctl != nil || f.err != nil {
		return f.ctl, f.err
	}
	timeout, err := f.resolveLockTimeout()
	if err != nil {
		f.err = err
		return nil, err
	}
	db := os.Getenv("ORCH_DB")
	if f.flags != nil && f.flags.Changed("db") {
		db = f.db
	}
	if db == "" {
		db = f.defaultDB
	}
	f.ctl = control.New(control.Config{DB: db, Sync: f.sync, LockTimeout: timeout})
	f.ctl.HandOverIO = &control.IO{In: f.io.in, Out: f.io.out, Err: f.io.err}
	f.ctl.Version = versionString()
	return f.ctl, nil
}

// resolveLockTimeout is how long a write waits for another process's
// lock: --lock-timeout, else ORCH_LOCK_TIMEOUT, else the store's default.
func (f *factory) resolveLockTimeout() (time.Duration, error) {
	if f.flags != nil && f.flags.Changed("lock-timeout") {
		if f.lockTimeout <= 0 {
			return 0, usageError(fmt.Errorf("--lock-timeout %s: give a duration above zero, such as 30s", f.lockTimeout))
		}
		return f.lockTimeout, nil
	}
	if env := os.Getenv("ORCH_LOCK_TIMEOUT"); env != "" {
		d, err := time.ParseDuration(env)
		if err != nil || d <= 0 {
			return 0, usageError(fmt.Errorf("ORCH_LOCK_TIMEOUT=%s: give a duration above zero, such as 30s", env))
		}
		return d, nil
	}
	return store.DefaultLockTimeout, nil
}

// close closes what the commands opened through the factory.
func (f *factory) close() {
	if f.ctl != nil {
		_ = f.ctl.Close()
	}
}

// unhandledFlags names (--name) the flags set in fs that are not known:
// what a command handed over to orch-temporal refuses. --db is always
// known (orch passes the database it resolved).
func unhandledFlags(fs *pflag.FlagSet, known ...string) []string {
	ok := map[string]bool{"db": true}
	for _, k := range known {
		ok[k] = true
	}
	var bad []string
	fs.Visit(func(f *pflag.Flag) {
		if !ok[f.Name] {
			bad = append(bad, "--"+f.Name)
		}
	})
	return bad
}
