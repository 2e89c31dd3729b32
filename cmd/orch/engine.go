package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

// The temporal engine lives in a second binary, orch-temporal, which holds
// the Temporal client (its SDK and API): linked into orch, they would make
// every command bigger and slower to start. orch run --engine temporal (or
// ORCH_ENGINE=temporal), orch worker, and orch go, answer, stop, bb set and
// resume on a run recorded with a temporal block hand over to it, after
// cobra parsed the command line (so global flags may come first): orch
// builds orch-temporal's arguments itself, with the database it resolved
// and, for a recorded run, the Temporal address, namespace and task queue
// the run started with.

const temporalBinary = "orch-temporal"

// engineOf is the engine orch run's flags ask for: --engine, else
// $ORCH_ENGINE, else local.
func engineOf(cmd *cobra.Command) (string, error) {
	engine := os.Getenv("ORCH_ENGINE")
	if f := cmd.Flag("engine"); f != nil && f.Changed {
		engine = f.Value.String()
	}
	switch engine {
	case "", "local":
		return "local", nil
	case "temporal":
		return "temporal", nil
	}
	return "", usageError(fmt.Errorf("unknown engine %q (want local or temporal)", engine))
}

// refuseFlags refuses, for a command handed over to orch-temporal, every
// flag the person set that orch-temporal does not take, naming them all.
func refuseFlags(cmd *cobra.Command, what, otherwise string, known ...string) error {
	ok := map[string]bool{"db": true}
	for _, k := range known {
		ok[k] = true
	}
	var bad []string
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if !ok[f.Name] {
			bad = append(bad, "--"+f.Name)
		}
	})
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	return usageError(fmt.Errorf("%s runs on Temporal (through %s), which does not take %s in this version: leave %s out%s",
		what, temporalBinary, strings.Join(bad, ", "), itOrThem(len(bad)), otherwise))
}

func itOrThem(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

// temporalFlags are orch-temporal's flags for a recorded Temporal run: the
// resolved database and where the run's workflow is.
func temporalFlags(dbFile string, t *record.TemporalRun) []string {
	abs, err := filepath.Abs(dbFile)
	if err != nil {
		abs = dbFile
	}
	return []string{"--db", abs, "--temporal-address", t.Address, "--temporal-namespace", t.Namespace, "--task-queue", t.TaskQueue}
}

// temporalOf is where run id's workflow is when it runs on Temporal (nil:
// the local engine).
func temporalOf(ctx context.Context, db *store.DB, id string) (*record.TemporalRun, error) {
	return db.TemporalRun(ctx, id)
}

// handOverRecorded hands a command on run id over to orch-temporal when
// the run is on Temporal (handled: it was, and err is orch-temporal's
// outcome). known are the command's flags orch-temporal takes; argv builds
// orch-temporal's arguments from the run's database and Temporal flags;
// check, if not nil, refuses what the store already shows cannot be done
// (a GO for a cue that is over), as for a local run.
func handOverRecorded(cmd *cobra.Command, io *streams, db *store.DB, id string, known []string, check func() error, argv func(flags []string) []string) (handled bool, err error) {
	t, err := temporalOf(cmd.Context(), db, id)
	if err != nil || t == nil {
		return false, err
	}
	what := fmt.Sprintf("%s: run %s", cmd.CommandPath(), id)
	if err := refuseFlags(cmd, what, "", known...); err != nil {
		return true, err
	}
	if check != nil {
		if err := check(); err != nil {
			return true, err
		}
	}
	return true, handOver(io, what, argv(temporalFlags(db.Path(), t)))
}

// handOver runs orch-temporal with args and returns nil or a silent error
// with its exit code; missing, it says how to install it (exit 2).
func handOver(io *streams, what string, args []string) error {
	bin := temporalPath()
	if bin == "" {
		return usageError(fmt.Errorf("%s needs %s: go install github.com/orch-cli/orch/cmd/orch-temporal@%s (it holds the Temporal client; orch stays small)",
			what, temporalBinary, versionString()))
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = io.in, io.out, io.err
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ee):
		return silent(ee.ExitCode())
	}
	return fmt.Errorf("running %s: %w", bin, err)
}

// temporalPath finds orch-temporal next to this orch, else on PATH.
func temporalPath() string {
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), temporalBinary+exeSuffix())
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	p, err := exec.LookPath(temporalBinary)
	if err != nil {
		return ""
	}
	return p
}

func exeSuffix() string {
	if runtime.GOOS == "windows" {
		return ".exe"
	}
	return ""
}
