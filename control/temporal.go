package control

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

// The Temporal engine lives in a second binary, orch-temporal, which holds
// the Temporal client (its SDK and API): linked into orch, they would make
// every command bigger and slower to start. An action on a run recorded
// with a temporal block is handed over to it, with the database resolved
// here and the Temporal address, namespace and task queue the run started
// with.

// TemporalBinary is the program that holds the Temporal client.
const TemporalBinary = "orch-temporal"

// EngineInfo says which engine runs a run.
type EngineInfo struct {
	Run      string              // the run's id
	Temporal *record.TemporalRun // where its workflow is; nil: the local engine
}

// Engine says which engine runs the run ref names.
func (c *Controller) Engine(ctx context.Context, ref string) (*EngineInfo, error) {
	var out *EngineInfo
	err := c.reading(ctx, ref, func(db *store.DB, id string) error {
		t, err := db.TemporalRun(ctx, id)
		out = &EngineInfo{Run: id, Temporal: t}
		return err
	})
	return out, err
}

// HandOver is a command line for orch-temporal: What names the action for
// messages ("orch run --engine temporal"), Args are orch-temporal's.
type HandOver struct {
	What string
	Args []string
	// Within bounds the run of orch-temporal (0: none): past it, it is killed.
	Within time.Duration
	// Env is added to orch-temporal's environment (orch's own, inherited):
	// the API key goes there, never in Args.
	Env []string
}

// Run runs orch-temporal with h.Args. With io its output goes there and a
// failure is a *HandOverError with its exit status alone; without, its
// output is captured: the message on success, the error's text on failure.
// orch-temporal not found (next to this orch, else on PATH) is Invalid,
// saying how to install it (version: orch's, for go install).
func (h HandOver) Run(io *IO, version string) (string, error) {
	bin := temporalPath()
	if bin == "" {
		return "", invalidf("%s needs %s (it holds the Temporal client; orch stays small): %s", h.What, TemporalBinary, installHint(version))
	}
	ctx, cancel := context.Background(), context.CancelFunc(func() {})
	if h.Within > 0 {
		ctx, cancel = context.WithTimeout(ctx, h.Within)
	}
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, h.Args...)
	cmd.WaitDelay = time.Second // killed, its output is not waited for past this
	cmd.Env = append(append(os.Environ(), fmt.Sprintf("%s=%d", ParentEnv, os.Getpid())), h.Env...)
	dieWithParent(cmd)
	var out bytes.Buffer
	if io != nil {
		cmd.Stdin, cmd.Stdout, cmd.Stderr = io.In, io.Out, io.Err
	} else {
		cmd.Stdout, cmd.Stderr = &out, &out
	}
	err := runForwarding(cmd)
	msg := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(out.String()), "orch: "))
	var ee *exec.ExitError
	switch {
	case err == nil:
		return msg, nil
	case errors.As(err, &ee):
		return "", &HandOverError{Code: ee.ExitCode(), Output: msg}
	}
	return "", fmt.Errorf("running %s: %w", bin, err)
}

// ParentEnv gives orch-temporal orch's pid: a worker whose orch is gone
// (kill -9) drains and ends instead of running agents nobody can stop.
const ParentEnv = "ORCH_PARENT_PID"

// runForwarding runs cmd, passing it the SIGINT and SIGTERM orch receives
// (kill PID of orch worker drains its worker; orch's own handler would
// otherwise swallow them).
func runForwarding(cmd *exec.Cmd) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, forwarded...)
	defer signal.Stop(sig)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case err := <-done:
			return err
		case s := <-sig:
			_ = cmd.Process.Signal(s)
		}
	}
}

// forwarded are the signals orch passes on to orch-temporal.
var forwarded = []os.Signal{os.Interrupt, syscall.SIGTERM}

// installHint says how to get orch-temporal for an orch of version: go
// install at that version for a released one; for a build of a clone (a
// version go install cannot fetch, such as dev), go build next to this orch.
func installHint(version string) string {
	const pkg = "github.com/orch-cli/orch/cmd/orch-temporal"
	if moduleVersion.MatchString(version) {
		return "go install " + pkg + "@" + version
	}
	dir := "DIR-OF-ORCH"
	if self, err := os.Executable(); err == nil {
		dir = filepath.Dir(self)
	}
	return fmt.Sprintf("from the clone orch was built from, go build -o %s ./cmd/orch-temporal (or go install %s@latest)", dir, pkg)
}

// moduleVersion is a version go install can fetch: a tag or a pseudo-version.
var moduleVersion = regexp.MustCompile(`^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`)

// handOver hands an action on run id (on Temporal at t) over to
// orch-temporal: verb is its command (go; bb set), args what follows the
// run's id. It returns what orch-temporal said, when captured.
func (c *Controller) handOver(db *store.DB, id string, t *record.TemporalRun, verb []string, args ...string) (string, error) {
	argv := append(append(append(verb[:len(verb):len(verb)], TemporalFlags(db.Path(), t)...), "--", id), args...)
	what := fmt.Sprintf("orch %s: run %s", strings.Join(verb, " "), id)
	return HandOver{What: what, Args: argv}.Run(c.HandOverIO, c.Version)
}

// TemporalFlags are orch-temporal's flags for a recorded Temporal run: the
// database, where the run's workflow is and how to reach it (TLS; an API
// key comes from $TEMPORAL_API_KEY, which orch-temporal inherits).
func TemporalFlags(dbFile string, t *record.TemporalRun) []string {
	abs, err := filepath.Abs(dbFile)
	if err != nil {
		abs = dbFile
	}
	args := []string{"--db", abs, "--temporal-address", t.Address, "--temporal-namespace", t.Namespace, "--task-queue", t.TaskQueue}
	for _, f := range []struct{ flag, value string }{{"--tls", t.TLS}, {"--tls-cert", t.TLSCert}, {"--tls-key", t.TLSKey},
		{"--tls-ca", t.TLSCA}, {"--tls-server-name", t.TLSServerName}} {
		if f.value != "" {
			args = append(args, f.flag, f.value)
		}
	}
	return args
}

// catchUp brings the store of a Temporal run that has not ended up to date
// with its workflow (orch-temporal sync) before it is read: without a
// follower (after --detach, orch run's exit 3, orch go or orch stop) the
// store would stop at the last event followed. A follower's run is left to
// it; an unreachable server leaves the store as it is (what it shows says
// so: followed by nobody; Notice, when set, is told once, and the run is
// left alone for catchUpRetry).
func (c *Controller) catchUp(ctx context.Context, db *store.DB, id string) {
	t, err := db.TemporalRun(ctx, id)
	if err != nil || t == nil {
		return
	}
	if st, err := db.RunState(ctx, id); err != nil || st.Ended() {
		return
	}
	key := db.Path() + "\x00" + id
	if !c.caughtUp.due(key, time.Now()) {
		return
	}
	args := append(append([]string{"sync"}, TemporalFlags(db.Path(), t)...), "--", id)
	_, err = HandOver{What: "orch status: run " + id, Args: args, Within: catchUpWithin}.Run(nil, c.Version)
	if c.caughtUp.ended(key, err) && c.Notice != nil {
		c.Notice(fmt.Sprintf("run %s on Temporal (%s) could not be brought up to date, it is shown as last followed: %v", id, t.Address, err))
	}
}

// catchUpWithin bounds catchUp: a server that does not answer (down, far)
// leaves the store as it is rather than hold up orch status.
const catchUpWithin = 5 * time.Second

// temporalPath finds orch-temporal next to this orch, else on PATH.
func temporalPath() string {
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), TemporalBinary+exeSuffix())
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	p, err := exec.LookPath(TemporalBinary)
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

// onTemporal is where run id's workflow is when it runs on Temporal (nil:
// the local engine). unhandled are options the caller was given that
// orch-temporal does not take (named as the caller knows them: --wait): on
// Temporal they refuse the action, all named, before anything is sent.
func onTemporal(ctx context.Context, db *store.DB, id, what string, unhandled []string) (*record.TemporalRun, error) {
	t, err := db.TemporalRun(ctx, id)
	if err != nil || t == nil {
		return nil, err
	}
	return t, RefuseOptions(fmt.Sprintf("%s: run %s", what, id), "", unhandled)
}

// RefuseOptions refuses, for an action handed over to orch-temporal, the
// options it does not take, naming them all (sorted); none: nil.
// otherwise ends the message (", or run it with --engine local").
func RefuseOptions(what, otherwise string, unhandled []string) error {
	if len(unhandled) == 0 {
		return nil
	}
	bad := slices.Sorted(slices.Values(unhandled))
	it := "it"
	if len(bad) > 1 {
		it = "them"
	}
	return invalidf("%s runs on Temporal (through %s), which does not take %s in this version: leave %s out%s",
		what, TemporalBinary, strings.Join(bad, ", "), it, otherwise)
}
