package proc

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// holdCgroupVar makes the test binary a run's owner that holds its cgroup
// open (TestHoldRunCgroup): "idle" when its agent has ended (the cgroup
// empty, between attempts), "agent" while its agent runs.
const holdCgroupVar = "ORCH_PROC_TEST_HOLD_CGROUP"

// TestHoldRunCgroup is not a test: it is the owner process of the tests
// below, run in a copy of the test binary.
func TestHoldRunCgroup(t *testing.T) {
	mode := os.Getenv(holdCgroupVar)
	if mode == "" {
		t.Skip("the owner process of the tests of cgroups left behind")
	}
	s := NewSweeper(fmt.Sprintf("held-p%d", os.Getpid()), func(Orphan) {})
	s.Start()
	if s.Cgroup() == nil {
		fmt.Println("none")
		return
	}
	const token = "held/cue/A/1/x"
	s.Begin(token)
	line := "true"
	if mode == "agent" {
		line = "exec sleep 60"
	}
	p, _ := start(t, t.TempDir(), line, token, false, s.Cgroup())
	if mode == "idle" {
		waitDone(t, p)
		p.Sweep(grace, false) // its leaf emptied, kept for the next attempt
	}
	fmt.Println(s.Cgroup().dir, p.PID())
	time.Sleep(time.Minute) // until killed
}

// holdCgroup starts an owner process (see TestHoldRunCgroup) and returns
// its cgroup, its agent's pid and the owner. The test is skipped where
// there are no cgroups to write to.
func holdCgroup(t *testing.T, mode string) (dir string, agent int, owner *exec.Cmd) {
	t.Helper()
	owner = exec.Command(os.Args[0], "-test.run=^TestHoldRunCgroup$")
	owner.Env = append(os.Environ(), holdCgroupVar+"="+mode)
	out, err := owner.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = owner.Process.Kill(); _ = owner.Wait() })
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- s
	}()
	var said string
	select {
	case said = <-line:
	case <-time.After(30 * time.Second): // a bound, not a timing
		t.Fatal("the owner process said nothing")
	}
	if strings.HasPrefix(said, "none") {
		t.Skip("no cgroup v2 to write to here")
	}
	if _, err := fmt.Sscan(said, &dir, &agent); err != nil {
		t.Fatalf("the owner process said %q: %v", said, err)
	}
	return dir, agent, owner
}

// killOwner kills the owner process with SIGKILL, as a crash would: it
// closes nothing.
func killOwner(t *testing.T, owner *exec.Cmd) {
	t.Helper()
	if err := owner.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = owner.Wait()
}

// TestLeftCgroupRemovedOnceItsOwnerIsGone: the cgroup of a live run, empty
// between attempts, is never removed by another run's start; once its owner
// is killed with -9 the next run's start removes it, leaves and all.
func TestLeftCgroupRemovedOnceItsOwnerIsGone(t *testing.T) {
	dir, _, owner := holdCgroup(t, "idle")
	if populated(dir) {
		t.Fatalf("the idle owner's cgroup %s has a process in it", dir)
	}
	s := NewSweeper("r11", func(Orphan) {})
	s.Start()
	t.Cleanup(func() { s.Stop() })
	s.Cgroup().removeLeft(nil) // (what it removes of others' is theirs)
	if _, err := os.Stat(dir + "/p1"); err != nil {
		t.Fatalf("the live idle run's cgroup was removed: %v", err)
	}

	killOwner(t, owner)
	next := NewSweeper("r12", func(Orphan) {})
	next.Start() // its first sweep removes what was left
	t.Cleanup(func() { next.Stop() })
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(dir); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cgroup %s of an owner killed with -9 is still there", dir)
		}
	}
}

// TestLeftCgroupWithALiveProcessKept: a cgroup whose owner is gone but
// whose agent lives on is left, agent and all, for orch stop or orch resume
// of its run.
func TestLeftCgroupWithALiveProcessKept(t *testing.T) {
	BecomeSubreaper() // the agent comes back to us, to be reaped
	dir, agent, owner := holdCgroup(t, "agent")
	killOwner(t, owner)
	t.Cleanup(func() { removeCgroupTree(dir) })
	s := NewSweeper("r13", func(Orphan) {})
	s.Start()
	t.Cleanup(func() { s.Stop() })
	s.Cgroup().removeLeft(nil)
	if !alive(agent) {
		t.Fatalf("the agent %d of the killed owner was killed", agent)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the cgroup with a live process was removed: %v", err)
	}
	if killed := removeCgroupTree(dir); len(killed) != 1 || killed[0] != agent {
		t.Errorf("stop of the run killed %v, want its agent %d", killed, agent)
	}
}

// TestLockedCgroupGoneWhenRemovedFirst: a cgroup a sweep removed between
// its mkdir and its lock is seen as gone once locked (lockCgroup reads its
// files through the descriptor): its maker takes another name. A locked one
// is never removed.
func TestLockedCgroupGoneWhenRemovedFirst(t *testing.T) {
	own := ownCgroupDir()
	dir := own + "/" + cgroupName(fmt.Sprintf("r14-p%d", os.Getpid()))
	if own == "" || os.Mkdir(dir, 0o755) != nil {
		t.Skip("no cgroup v2 to write to here")
	}
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	removeIfLeft(dir) // (or another run's start did)
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("an unlocked empty cgroup was not removed: %v", err)
	}
	if err := lockOpenCgroup(fd); err != errCgroupGone {
		t.Errorf("the lock of a cgroup removed once open: %v, want %v", err, errCgroupGone)
	}

	c := openRunCgroup(fmt.Sprintf("r14-p%d", os.Getpid()))
	if c == nil {
		t.Fatal("no cgroup made")
	}
	defer c.close()
	if removeIfLeft(c.dir) {
		t.Error("a locked cgroup was removed")
	}
}

// TestRemoveLeftIsBounded: one run's start removes at most maxLeftRemoved
// cgroups left behind; the next runs' remove the rest. (In a directory of
// its own, as no other run looks there: the sweep's bound is what is
// checked, not the kernel's.)
func TestRemoveLeftIsBounded(t *testing.T) {
	own := t.TempDir()
	var dirs []string
	for i := 0; i < maxLeftRemoved+8; i++ {
		dir := own + "/" + cgroupName("r15")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	c := &RunCgroup{dir: own + "/" + cgroupName("r16"), lock: -1}
	if n := c.removeLeft(nil); n != maxLeftRemoved {
		t.Errorf("one pass removed %d, want %d", n, maxLeftRemoved)
	}
	if n := c.removeLeft(nil); n != 8 {
		t.Errorf("the next pass removed %d, want the 8 left", n)
	}
	for _, dir := range dirs {
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("%s is left", dir)
		}
	}
}
