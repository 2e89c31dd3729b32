package proc

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestCgroupLeafServesTheNextProcess: a leaf an ended process left empty
// serves the next process, whose escapee its sweep still finds (the leaf's
// kept cgroup.events is read afresh); and a process swept twice gives its
// leaf back once, so no two processes ever share one.
func TestCgroupLeafServesTheNextProcess(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skipf("needs the setsid command (%v)", err)
	}
	s := NewSweeper("r6", func(Orphan) {})
	s.Start()
	t.Cleanup(func() { s.Stop() })
	if s.Cgroup() == nil {
		t.Skip("no cgroup v2 to write to here")
	}
	dir := t.TempDir()
	const token = "r6/cue/A/1/x"
	s.Begin(token)
	defer s.End(token)

	first, _ := start(t, dir, "true", token, false, s.Cgroup())
	waitDone(t, first)
	leaf := first.cg
	if in, out := first.Sweep(grace, false); len(in) != 0 || len(out) != 0 {
		t.Fatalf("a process that left nothing: swept %v and %v", in, out)
	}
	first.Sweep(grace, false) // again, as a clean-up would
	if n := len(s.Cgroup().free); n != 1 {
		t.Fatalf("%d free leaves after one process swept twice, want 1", n)
	}

	second, _ := start(t, dir, `setsid sh -c 'echo $$ > escaped.pid; exec sleep 60' >/dev/null 2>&1 &
while [ ! -s escaped.pid ]; do sleep 0.01; done`, token, false, s.Cgroup())
	if second.cg != leaf {
		t.Fatalf("the second process got leaf %s, want the emptied %s", second.cg.dir, leaf.dir)
	}
	waitDone(t, second)
	escaped := readPid(t, filepath.Join(dir, "escaped.pid"))
	if _, out := second.Sweep(grace, false); len(out) != 1 || out[0] != escaped {
		t.Errorf("the second process's sweep found %v, want its escapee [%d]", out, escaped)
	}
	if alive(escaped) {
		t.Errorf("the escapee %d is alive", escaped)
		_ = syscall.Kill(escaped, syscall.SIGKILL)
	}
}

// TestSweepOfEmptyLeafDoesNotWaitForOutput: when the leaf is empty once the
// process has exited, nothing is left that could still write, so Sweep
// returns without waiting for the output to be read (the attempt reports
// its end while its readers finish); what was written is still read whole.
func TestSweepOfEmptyLeafDoesNotWaitForOutput(t *testing.T) {
	s := NewSweeper("r7", func(Orphan) {})
	s.Start()
	t.Cleanup(func() { s.Stop() })
	if s.Cgroup() == nil {
		t.Skip("no cgroup v2 to write to here")
	}
	const token = "r7/cue/A/1/x"
	s.Begin(token)
	defer s.End(token)
	stdio, err := NewStdio(false)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Start(Spec{Shell: "echo done", Dir: t.TempDir(), Env: os.Environ(), Token: token, Stdio: stdio, Cgroup: s.Cgroup(), Grace: grace})
	if err != nil {
		t.Fatal(err)
	}
	release, got := make(chan struct{}), make(chan string, 1)
	p.ReadOutput(func(r io.Reader) { // a reader that is late, as a busy machine makes it
		<-release
		b, _ := io.ReadAll(r)
		got <- string(b)
	}, func(r io.Reader) { _, _ = io.Copy(io.Discard, r) })
	t.Cleanup(func() { p.Terminate(grace); p.Sweep(grace, true) })
	waitDone(t, p)
	swept := make(chan struct{})
	go func() {
		p.Sweep(grace, false)
		close(swept)
	}()
	select {
	case <-swept:
	case <-time.After(30 * time.Second): // a bound, not a timing: it waits for the release below
		close(release)
		t.Fatal("the sweep of an emptied leaf waited for the output to be read")
	}
	close(release)
	p.WaitOutput()
	if out := <-got; out != "done\n" {
		t.Errorf("stdout %q, want the whole of it", out)
	}
	if n := len(s.Cgroup().free); n != 1 {
		t.Errorf("%d free leaves after the sweep, want the emptied one", n)
	}
}

// TestEmptyRunCgroupRemovedWithoutAWalk: a run whose processes all ended by
// themselves leaves its cgroup empty; Stop removes it and its leaves
// without walking the tree for processes to kill.
func TestEmptyRunCgroupRemovedWithoutAWalk(t *testing.T) {
	s := NewSweeper("r8", func(Orphan) {})
	s.Start()
	if s.Cgroup() == nil {
		s.Stop()
		t.Skip("no cgroup v2 to write to here")
	}
	dir := s.Cgroup().dir
	const token = "r8/cue/A/1/x"
	s.Begin(token)
	p, _ := start(t, t.TempDir(), "true", token, false, s.Cgroup())
	waitDone(t, p)
	p.Sweep(grace, false)
	s.End(token)
	walks := cgroupTreeWalks.Load()
	if killed := s.Stop(); len(killed) != 0 {
		t.Errorf("Stop killed %v in an empty cgroup", killed)
	}
	if n := cgroupTreeWalks.Load() - walks; n != 0 {
		t.Errorf("the empty run cgroup was walked %d time(s), want none", n)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the run's cgroup %s is still there (%v)", dir, err)
	}

	// A leaf the run's cgroup does not know of (as one a process could not
	// be started in leaves) keeps it from being removed so: it is walked.
	s = NewSweeper("r9", func(Orphan) {})
	s.Start()
	dir = s.Cgroup().dir
	if err := os.Mkdir(filepath.Join(dir, "stray"), 0o755); err != nil {
		t.Fatal(err)
	}
	walks = cgroupTreeWalks.Load()
	s.Stop()
	if n := cgroupTreeWalks.Load() - walks; n != 1 {
		t.Errorf("a run cgroup with a leaf it does not know of was walked %d time(s), want once", n)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the run's cgroup %s is still there (%v)", dir, err)
	}
}

// TestSweepersOfOneRunKeepTheirCgroups: two sweepers of one run (a worker's
// pool of the run closing while a new one starts, or a second worker
// process under the same parent cgroup) each have a cgroup of their own:
// the first's Stop neither kills the second's agent nor removes its leaf,
// and stop/resume of the run (findRunCgroups) finds both. (Before, both
// were orch-run-RUN: the first's Stop found it populated and killed the
// whole tree.)
func TestSweepersOfOneRunKeepTheirCgroups(t *testing.T) {
	run := fmt.Sprintf("r10-p%d", os.Getpid()) // another copy of these tests has its own
	first := NewSweeper(run, func(Orphan) {})
	first.Start()
	second := NewSweeper(run, func(Orphan) {})
	second.Start()
	t.Cleanup(func() { second.Stop() })
	if first.Cgroup() == nil || second.Cgroup() == nil {
		first.Stop()
		t.Skip("no cgroup v2 to write to here")
	}
	if found := findRunCgroups(run); len(found) != 2 {
		t.Errorf("findRunCgroups found %v, want the two sweepers' cgroups", found)
	}
	token := run + "/cue/A/1/x"
	second.Begin(token)
	defer second.End(token)
	p, _ := start(t, t.TempDir(), "exec sleep 60", token, false, second.Cgroup())
	leaf := p.cg.dir
	first.Stop()
	if !alive(p.PID()) {
		t.Fatalf("the first sweeper's Stop killed the second's agent %d", p.PID())
	}
	if _, err := os.Stat(leaf); err != nil {
		t.Errorf("the second sweeper's leaf is gone: %v", err)
	}
}
