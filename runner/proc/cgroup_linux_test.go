package proc

import (
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
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
