//go:build linux || darwin

package proc

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"testing"
	"time"
)

// sleeper starts sleep 60 with extra in its environment; it is killed
// and reaped when the test ends.
func sleeper(t *testing.T, extra ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	cmd.Env = append(os.Environ(), extra...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
	return cmd
}

// TestKillOrphanedOwned: a worker's processes carry its mark; one started
// by a worker that is gone (kill -9) is killed by the next worker of the
// same key at its start; a live worker's, and another key's, are spared.
func TestKillOrphanedOwned(t *testing.T) {
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	dead := strconv.Itoa(gone.Process.Pid)
	live := sleeper(t) // stands for a live worker
	orphan := sleeper(t, OwnerEnv+"="+dead+":worker:/srv/p")
	ofLive := sleeper(t, OwnerEnv+"="+strconv.Itoa(live.Process.Pid)+":worker:/srv/p")
	otherRoot := sleeper(t, OwnerEnv+"="+dead+":worker:/srv/q")
	killed := KillOrphanedOwned("worker:/srv/p")
	if !slices.Contains(killed, orphan.Process.Pid) {
		t.Errorf("killed %v, not the dead worker's process %d", killed, orphan.Process.Pid)
	}
	deadline := time.Now().Add(10 * time.Second)
	for alive(orphan.Process.Pid) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if alive(orphan.Process.Pid) {
		t.Errorf("the dead worker's process %d still runs", orphan.Process.Pid)
	}
	for _, c := range []*exec.Cmd{live, ofLive, otherRoot} {
		if slices.Contains(killed, c.Process.Pid) || !alive(c.Process.Pid) {
			t.Errorf("%d (%v) was killed", c.Process.Pid, c.Env[len(c.Env)-1])
		}
	}
}

// TestSetOwnerMarksProcesses: once a process is an owner, what it starts
// carries its mark.
func TestSetOwnerMarksProcesses(t *testing.T) {
	SetOwner("worker:/srv/p")
	t.Cleanup(func() { owner.Store(nil) })
	p, out := start(t, t.TempDir(), `echo "$`+OwnerEnv+`"`, "r/cue/A/1/x", false, nil)
	waitDone(t, p)
	p.WaitOutput()
	if want := strconv.Itoa(os.Getpid()) + ":worker:/srv/p\n"; out.stdout != want {
		t.Errorf("the process's %s: %q, want %q", OwnerEnv, out.stdout, want)
	}
}
