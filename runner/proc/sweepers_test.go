//go:build unix

package proc

import (
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
)

// TestSweepersOfOneRun: a worker may hold two sweepers of one run at once
// (its pool of the run closing while a new one starts, the same attempt
// token in both). The old one's End and Stop take back only its own marks:
// the new one's attempt, still live, keeps its processes; its own Stop
// sweeps them. (Before, Stop forgot every token of the run and End any
// mark of the token: the old pool's close killed the new pool's agent.)
func TestSweepersOfOneRun(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skipf("needs the setsid command (%v)", err)
	}
	BecomeSubreaper()
	dir := t.TempDir()
	var mu sync.Mutex
	var killed []Orphan
	note := func(o Orphan) { mu.Lock(); killed = append(killed, o); mu.Unlock() }
	seen := func() []Orphan { mu.Lock(); defer mu.Unlock(); return append([]Orphan(nil), killed...) }
	old := NewSweeper("r9", note)
	old.Start()
	const token = "r9/agent/a"
	old.Begin(token)
	cur := NewSweeper("r9", note)
	cur.Start()
	cur.Begin(token)
	p, _ := start(t, dir, `setsid sh -c 'echo $$ > escaped.pid; exec sleep 60' >/dev/null 2>&1 &
while [ ! -s escaped.pid ]; do sleep 0.01; done`, token, false, nil)
	waitDone(t, p)
	escaped := readPid(t, filepath.Join(dir, "escaped.pid"))
	t.Cleanup(func() { _ = syscall.Kill(escaped, syscall.SIGKILL) })
	old.End(token)
	old.End(token) // twice: the second is no one's
	old.Stop()
	if k := seen(); !alive(escaped) || len(k) != 0 {
		t.Fatalf("the old sweeper killed %+v, the live attempt's process alive: %v", k, alive(escaped))
	}
	cur.End(token)
	cur.Stop()
	if k := seen(); alive(escaped) || len(k) != 1 || k[0].PID != escaped {
		t.Errorf("after the run's last sweeper stopped: killed %+v, %d alive: %v", k, escaped, alive(escaped))
	}
}
