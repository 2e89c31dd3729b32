//go:build unix

package proc

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const grace = 300 * time.Millisecond

// start starts a shell line in dir with its output collected, failing the
// test if it cannot.
func start(t *testing.T, dir, line, token string, withStdin bool, cg *RunCgroup) (*Process, *output) {
	t.Helper()
	s, err := NewStdio(withStdin)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Start(Spec{Shell: line, Dir: dir, Env: os.Environ(), Token: token, Stdio: s, Cgroup: cg, Grace: grace})
	if err != nil {
		t.Fatal(err)
	}
	out := &output{}
	p.ReadOutput(out.read(&out.stdout), out.read(&out.stderr))
	t.Cleanup(func() { p.Terminate(grace); p.Sweep(grace, true) })
	return p, out
}

type output struct {
	mu             sync.Mutex
	stdout, stderr string
}

func (o *output) read(to *string) func(io.Reader) {
	return func(r io.Reader) {
		b, _ := io.ReadAll(r)
		o.mu.Lock()
		*to = string(b)
		o.mu.Unlock()
	}
}

// waitDone fails the test if the process has not ended in a long while.
func waitDone(t *testing.T, p *Process) {
	t.Helper()
	select {
	case <-p.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the process did not end")
	}
}

// TestStartReadExit: a process gets its stdin, its token in the
// environment and its directory; its output is read to the end and how it
// ended is told, a signal too.
func TestStartReadExit(t *testing.T) {
	dir := t.TempDir()
	p, out := start(t, dir, `read task; echo "got $task in $(pwd) as $ORCH_ATTEMPT_TOKEN"; echo oops >&2; exit 3`, "r1/cue/A/1/x", true, nil)
	_, _ = p.Stdin().Write([]byte("T1\n"))
	_ = p.Stdin().Close()
	waitDone(t, p)
	p.WaitOutput()
	realDir, _ := filepath.EvalSymlinks(dir)
	if want := "got T1 in " + realDir + " as r1/cue/A/1/x\n"; out.stdout != want {
		t.Errorf("stdout %q, want %q", out.stdout, want)
	}
	if out.stderr != "oops\n" {
		t.Errorf("stderr %q", out.stderr)
	}
	if e := p.Exit(); e.Code != 3 || e.Signaled || e.String() != "exited with status 3" {
		t.Errorf("exit %+v (%s)", e, e)
	}

	p, _ = start(t, dir, `kill -SEGV $$`, "r1/cue/A/2/x", false, nil)
	waitDone(t, p)
	if e := p.Exit(); !e.Signaled || e.Code != -1 || e.String() != "killed by SIGSEGV" {
		t.Errorf("exit %+v (%s)", e, e)
	}
}

// TestStartErrors: a command that cannot start says why, in the spec's
// terms, and its streams are closed.
func TestStartErrors(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notexec"), []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{nil, "no command to run"},
		{[]string{"orch-no-such-command"}, `command "orch-no-such-command" not found in PATH`},
		{[]string{"./missing"}, `command "./missing" does not exist (relative to ` + dir + `)`},
		{[]string{"./notexec"}, `command "./notexec" is not executable`},
	} {
		s, err := NewStdio(true)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Start(Spec{Argv: tc.argv, Dir: dir, Stdio: s, Grace: grace})
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q: %v, want %s", tc.argv, err, tc.want)
		}
		if _, werr := s.in.Write([]byte("x")); werr == nil {
			t.Errorf("%q: its stdin is still open", tc.argv)
		}
	}
}

// TestTerminateStopsTheGroup: a process that ignores SIGTERM, with a child
// in its group, is killed after the grace period, child and all.
func TestTerminateStopsTheGroup(t *testing.T) {
	dir := t.TempDir()
	p, _ := start(t, dir, `trap '' TERM; sleep 60 & echo $! > child.pid; while :; do sleep 1; done`, "r2/cue/A/1/x", false, nil)
	child := readPid(t, filepath.Join(dir, "child.pid"))
	p.Terminate(grace)
	waitDone(t, p)
	if e := p.Exit(); !e.Signaled || e.Signal != syscall.SIGKILL {
		t.Errorf("exit %s, want killed by SIGKILL", e)
	}
	p.Sweep(grace, true)
	if alive(child) {
		t.Errorf("its child %d is alive", child)
	}
	p.Terminate(grace) // again: nothing happens
}

// TestSweepStopsStragglers: what a process left running in its group when
// it exited is stopped, and listed.
func TestSweepStopsStragglers(t *testing.T) {
	dir := t.TempDir()
	p, _ := start(t, dir, `sleep 60 >/dev/null 2>&1 & echo $! > child.pid`, "r3/cue/A/1/x", false, nil)
	waitDone(t, p)
	child := readPid(t, filepath.Join(dir, "child.pid"))
	inGroup, _ := p.Sweep(grace, false)
	if len(inGroup) != 1 || inGroup[0] != child {
		t.Errorf("swept %v, want [%d]", inGroup, child)
	}
	if alive(child) {
		t.Errorf("the straggler %d is alive", child)
	}
}

// TestSweeperKillsEscapee: a descendant that left its process group
// (setsid) and outlived its attempt is found by the run's sweeper, by the
// attempt's token, and killed; the callback names it.
func TestSweeperKillsEscapee(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skipf("needs the setsid command (%v)", err)
	}
	BecomeSubreaper()
	dir := t.TempDir()
	var mu sync.Mutex
	var killed []Orphan
	s := NewSweeper("r4", func(o Orphan) { mu.Lock(); killed = append(killed, o); mu.Unlock() })
	s.Start()
	const token = "r4/cue/A/1/x"
	s.Begin(token)
	// No cgroup: the sweeper is what finds it.
	p, _ := start(t, dir, `setsid sh -c 'echo $$ > escaped.pid; exec sleep 60' >/dev/null 2>&1 &
while [ ! -s escaped.pid ]; do sleep 0.01; done`, token, false, nil)
	waitDone(t, p)
	escaped := readPid(t, filepath.Join(dir, "escaped.pid"))
	if inGroup, _ := p.Sweep(grace, false); len(inGroup) != 0 {
		t.Errorf("swept %v from the group, want none", inGroup)
	}
	s.End(token)
	s.Stop()
	mu.Lock()
	defer mu.Unlock()
	if len(killed) != 1 || killed[0].PID != escaped || killed[0].Token != token {
		t.Errorf("killed %+v, want pid %d with token %s", killed, escaped, token)
	}
	if alive(escaped) {
		t.Errorf("the escapee %d is alive", escaped)
		_ = syscall.Kill(escaped, syscall.SIGKILL)
	}
}

// readPid waits for a process to write its pid to path.
func readPid(t *testing.T, path string) int {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
	}
	t.Fatalf("no pid in %s", path)
	return 0
}

// alive reports whether pid runs: signal 0 reaches it and it is no zombie.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	if runtime.GOOS == "linux" {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		return err == nil && !strings.Contains(string(b), ") Z ")
	}
	out, err := exec.Command("ps", "-o", "stat=", "-p", strconv.Itoa(pid)).Output()
	return err == nil && !strings.HasPrefix(strings.TrimSpace(string(out)), "Z")
}

// TestCgroupHoldsEscapee: with a run cgroup (Linux, where orch's cgroup is
// writable) a descendant that left the process group is still in the
// process's leaf: the process's own sweep kills it and lists it, and the
// sweeper has nothing left to find.
func TestCgroupHoldsEscapee(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skipf("needs the setsid command (%v)", err)
	}
	var killed []Orphan
	s := NewSweeper("r5", func(o Orphan) { killed = append(killed, o) })
	s.Start()
	if s.Cgroup() == nil {
		s.Stop()
		t.Skip("no cgroup v2 to write to here")
	}
	dir := t.TempDir()
	const token = "r5/cue/A/1/x"
	s.Begin(token)
	p, _ := start(t, dir, `setsid sh -c 'echo $$ > escaped.pid; exec sleep 60' >/dev/null 2>&1 &
while [ ! -s escaped.pid ]; do sleep 0.01; done`, token, false, s.Cgroup())
	waitDone(t, p)
	escaped := readPid(t, filepath.Join(dir, "escaped.pid"))
	inGroup, out := p.Sweep(grace, false)
	if len(inGroup) != 0 || len(out) != 1 || out[0] != escaped {
		t.Errorf("swept %v from the group and %v from the cgroup, want none and [%d]", inGroup, out, escaped)
	}
	s.End(token)
	if left := s.Stop(); len(left) != 0 || len(killed) != 0 {
		t.Errorf("the sweeper found %v and %+v after the process's sweep", left, killed)
	}
	if alive(escaped) {
		t.Errorf("the escapee %d is alive", escaped)
		_ = syscall.Kill(escaped, syscall.SIGKILL)
	}
}

// TestCgroupLeafAfterEscapee: the leaf a process's sweep emptied of an
// escapee serves the run's next process, which runs to its end (it was
// killed at once: the leaf kept killing what came into it).
func TestCgroupLeafAfterEscapee(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skipf("needs the setsid command (%v)", err)
	}
	s := cgroupSweeper(t, "r6")
	dir := t.TempDir()
	const token = "r6/cue/A/1/x"
	s.Begin(token)
	p, _ := start(t, dir, `setsid sleep 60 </dev/null >/dev/null 2>&1 & sleep 0.1`, token, false, s.Cgroup())
	waitDone(t, p)
	if _, out := p.Sweep(grace, false); len(out) != 1 {
		t.Fatalf("swept %v from the cgroup, want the escapee", out)
	}
	s.End(token)
	next, out := start(t, dir, `sleep 0.1; echo ran`, "r6/cue/B/1/x", false, s.Cgroup())
	waitDone(t, next)
	next.WaitOutput()
	if e := next.Exit(); e.Signaled || e.Code != 0 || out.stdout != "ran\n" {
		t.Errorf("the next process %s, said %q", e, out.stdout)
	}
}

// TestSweepOnce: a second Sweep of a process does nothing: its leaf of the
// run's cgroup serves another process since, which it must not kill.
func TestSweepOnce(t *testing.T) {
	s := cgroupSweeper(t, "r7")
	dir := t.TempDir()
	first, _ := start(t, dir, `true`, "r7/cue/A/1/x", false, s.Cgroup())
	waitDone(t, first)
	first.Sweep(grace, false)
	next, out := start(t, dir, `sleep 0.2; echo ran`, "r7/cue/B/1/x", false, s.Cgroup())
	if inGroup, escaped := first.Sweep(grace, true); inGroup != nil || escaped != nil {
		t.Errorf("the second sweep swept %v and %v", inGroup, escaped)
	}
	waitDone(t, next)
	next.WaitOutput()
	if e := next.Exit(); e.Signaled || out.stdout != "ran\n" {
		t.Errorf("the next process %s, said %q", e, out.stdout)
	}
}

// cgroupSweeper starts run runID's sweeper, stopped when the test ends; it
// skips the test where the run gets no cgroup.
func cgroupSweeper(t *testing.T, runID string) *Sweeper {
	t.Helper()
	s := NewSweeper(runID, func(Orphan) {})
	s.Start()
	t.Cleanup(func() { s.Stop() })
	if s.Cgroup() == nil {
		t.Skip("no cgroup v2 to write to here")
	}
	return s
}

// TestReadOutputDrainsWhatIsLeft: a reader that stops before the end of its
// stream leaves the rest to be read and dropped, so a process writing far
// more than a pipe holds is neither blocked nor cut off (SIGPIPE); one
// that reads to the end gets all of it.
func TestReadOutputDrainsWhatIsLeft(t *testing.T) {
	s, err := NewStdio(false)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Start(Spec{Shell: `head -c 1000000 /dev/zero || exit 9; head -c 300000 /dev/zero >&2`, Dir: t.TempDir(), Env: os.Environ(), Token: "r/cue/D/1/x", Stdio: s, Grace: grace})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Terminate(grace); p.Sweep(grace, true) })
	var head, all int
	p.ReadOutput(func(r io.Reader) {
		b := make([]byte, 10)
		head, _ = io.ReadFull(r, b)
	}, func(r io.Reader) {
		b, _ := io.ReadAll(r)
		all = len(b)
	})
	waitDone(t, p)
	p.WaitOutput()
	if head != 10 || all != 300000 {
		t.Errorf("read %d bytes of stdout and %d of stderr, want 10 and 300000", head, all)
	}
	if e := p.Exit(); e.Code != 0 || e.Signaled {
		t.Errorf("exit %s", e)
	}
}
