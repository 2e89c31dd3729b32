package proc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// RunCgroup is a run's cgroup (cgroup v2): it holds every process its
// agents start, however they leave their process group or clear their
// environment, and a write to cgroup.kill kills them all at once: systemd's
// KillMode=control-group. It is a child of orch's own cgroup, named
// orch-run-RUN.SUFFIX (a random suffix: each sweeper of a run has its own,
// see cgroupName), with a leaf per running agent process (p1, p2, ...) so that
// what one attempt left can be stopped when it ends. An emptied leaf serves
// the next process: making and removing a cgroup per process made a run of
// 1,000 `true`s about a third slower. Agents are started in their leaf
// directly (clone3 with CLONE_INTO_CGROUP): no fork can slip out before the
// move. Where cgroup v2 is not mounted or orch's cgroup is not writable (not
// delegated), or ORCH_NO_CGROUP is set, runs go without: the process-group
// kill and the subreaper's sweeps of orphans do the work (see Sweeper, which
// makes the run's cgroup and removes it).
type RunCgroup struct {
	dir    string
	lock   int          // dir, open and flocked while the cgroup is in use (see lockCgroup)
	n      atomic.Int64 // leaves made
	broken atomic.Bool  // the kernel would not start a process in a leaf
	mu     sync.Mutex
	free   []*leafCgroup // empty leaves
}

// leafCgroup is one agent process's leaf of the run's cgroup.
type leafCgroup struct {
	run *RunCgroup
	dir string
	fd  int // to start a process in it
	// events is its cgroup.events, kept open: whether the leaf is empty is
	// read again with one pread each time an attempt ends, instead of an
	// open, a read and a close, and a registration with Go's poller (-1:
	// not open, read by path).
	events int
	killed bool // cgroup.kill was written: the leaf serves no other process
}

const cgroupPrefix = "orch-run-"

// openRunCgroup makes a cgroup of run runID for one sweeper, or returns nil
// when there can be none.
func openRunCgroup(runID string) *RunCgroup {
	if os.Getenv("ORCH_NO_CGROUP") != "" || runID == "" || strings.ContainsAny(runID, "/\n\x00") {
		return nil
	}
	own := ownCgroupDir()
	if own == "" {
		return nil
	}
	// Another name when this one is taken, or when a sweep of cgroups left
	// behind (removeLeft) took it for one and removed it before it was
	// locked.
	for try := 0; try < 3; try++ {
		dir := filepath.Join(own, cgroupName(runID))
		if err := os.Mkdir(dir, 0o755); errors.Is(err, fs.ErrExist) {
			continue
		} else if err != nil {
			return nil
		}
		lock, err := lockCgroup(dir)
		switch {
		case errors.Is(err, errCgroupGone):
			continue
		case err != nil:
			_ = os.Remove(dir)
			return nil
		}
		return &RunCgroup{dir: dir, lock: lock}
	}
	return nil
}

// cgroupName is the name of a new cgroup of run runID: orch-run-RUN.SUFFIX,
// SUFFIX 8 random hex digits. Two sweepers of one run (a Temporal worker's
// pool of the run closing while a new one starts, or two workers under one
// parent cgroup) so never share one: the first's close would kill the
// second's agents. runOfCgroup reads the run back.
func cgroupName(runID string) string {
	return cgroupPrefix + runID + "." + fmt.Sprintf("%08x", rand.Uint32())
}

// runOfCgroup is the run of a cgroup named by cgroupName, "" when name is
// not such a name (another cgroup, or an orch-run-RUN of an orch from before
// the suffix: see findRunCgroups).
func runOfCgroup(name string) string {
	rest, ok := strings.CutPrefix(name, cgroupPrefix)
	i := strings.LastIndexByte(rest, '.')
	if !ok || i <= 0 || len(rest)-i-1 != 8 {
		return ""
	}
	for _, c := range rest[i+1:] {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return ""
		}
	}
	return rest[:i]
}

var errCgroupGone = errors.New("the cgroup was removed before it was locked")

// lockCgroup opens the run's new cgroup dir and takes an exclusive flock on
// it, held until close: that lock is how removeLeft tells the cgroup of a
// live owner, often empty between attempts, from one whose owner is gone
// (killed with -9), and removes only the latter. A lock cannot outlive its
// owner (the kernel drops it with the last descriptor, however the process
// ended: the descriptor is close-on-exec, so no agent inherits it), nor can
// a live owner lose it, where a recorded owner pid could be reused by
// another process. A sweep takes the lock before it removes a cgroup, so a
// cgroup it removed between the mkdir and the lock is seen here once the
// lock is taken: its files are gone (errCgroupGone). Where the file system
// takes no flock at all, the sweeps cannot take one either and remove
// nothing.
func lockCgroup(dir string) (int, error) {
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if errors.Is(err, syscall.ENOENT) {
		return -1, errCgroupGone
	} else if err != nil {
		return -1, err
	}
	if err := lockOpenCgroup(fd); err != nil {
		_ = syscall.Close(fd)
		return -1, err
	}
	return fd, nil
}

// lockOpenCgroup takes the lock of the cgroup open as fd (see lockCgroup).
func lockOpenCgroup(fd int) error {
	if err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); errors.Is(err, syscall.EWOULDBLOCK) {
		return errCgroupGone // a sweep holds it to remove it
	}
	var st unix.Stat_t
	if unix.Fstatat(fd, "cgroup.procs", &st, 0) != nil {
		return errCgroupGone
	}
	return unix.Fstatat(fd, "cgroup.kill", &st, 0) // none before Linux 5.14
}

// ownCgroupDir is the directory of orch's own cgroup in the cgroup v2
// hierarchy, "" when there is none.
func ownCgroupDir() string {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	var path string
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			path = p
		}
	}
	mnt := cgroup2Mount()
	if path == "" || mnt == "" || strings.HasSuffix(path, " (deleted)") {
		return ""
	}
	return filepath.Join(mnt, path)
}

// cgroup2Mount is where the cgroup v2 hierarchy is mounted ("" if nowhere):
// /sys/fs/cgroup, or /sys/fs/cgroup/unified on a hybrid system.
func cgroup2Mount() string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS... - FSTYPE SOURCE SUPER
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if f := strings.Fields(pre); ok && len(f) >= 5 && strings.HasPrefix(post, "cgroup2 ") && f[3] == "/" {
			return f[4]
		}
	}
	return ""
}

// leaf makes a new leaf for one agent process; nil when c is nil or it
// cannot be made.
func (c *RunCgroup) leaf() *leafCgroup {
	if c == nil || c.broken.Load() {
		return nil
	}
	c.mu.Lock()
	if n := len(c.free); n > 0 {
		g := c.free[n-1]
		c.free = c.free[:n-1]
		c.mu.Unlock()
		return g
	}
	c.mu.Unlock()
	dir := filepath.Join(c.dir, "p"+strconv.FormatInt(c.n.Add(1), 10))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil
	}
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		_ = os.Remove(dir)
		return nil
	}
	events, err := syscall.Open(filepath.Join(dir, "cgroup.events"), syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		events = -1
	}
	return &leafCgroup{run: c, dir: dir, fd: fd, events: events}
}

// failed says the kernel would not start a process in a leaf (clone3 with
// CLONE_INTO_CGROUP refused): the run's other processes start without.
func (c *RunCgroup) failed() {
	if c != nil {
		c.broken.Store(true)
	}
}

// attach makes the process started with attr start in the leaf.
func (g *leafCgroup) attach(attr *syscall.SysProcAttr) {
	if g != nil {
		attr.UseCgroupFD, attr.CgroupFD = true, g.fd
	}
}

// members lists the live processes in the leaf (zombies are not listed).
func (g *leafCgroup) members() []int {
	if g == nil {
		return nil
	}
	return cgroupProcs(g.dir)
}

// populated reports whether a process is still in the leaf.
func (g *leafCgroup) populated() bool {
	if g == nil {
		return false
	}
	if g.events >= 0 {
		// cgroup.events is made anew by each read from offset 0.
		var b [64]byte
		if n, err := syscall.Pread(g.events, b[:], 0); err == nil {
			return !bytes.Contains(b[:n], []byte("populated 0"))
		}
	}
	return populated(g.dir)
}

// signal sends sig to every process in the leaf.
func (g *leafCgroup) signal(sig syscall.Signal) {
	for _, pid := range g.members() {
		_ = syscall.Kill(pid, sig)
	}
}

// kill kills everything in the leaf and waits until it is empty; it
// reports whether it is.
func (g *leafCgroup) kill() bool {
	if g == nil {
		return true
	}
	if g.populated() {
		g.killed = true
	}
	return killCgroup(g.dir)
}

// release gives the leaf back to the run for the next process when its
// processes all ended by themselves. A leaf that was killed (cgroup.kill)
// is removed instead: Linux (6.18 here) kills at once any process a clone3
// starts into a cgroup once killed (CLONE_INTO_CGROUP), so the run's next
// agent would die as it started. One that cannot be emptied is left to
// close.
func (g *leafCgroup) release() {
	if g == nil {
		return
	}
	if g.killed || g.populated() {
		if g.kill() {
			_ = os.Remove(g.dir) // else what is left is the run's close's
		}
		g.closeFiles()
		return
	}
	g.reuse()
}

// reuse gives the empty leaf back to the run for the next process. Nothing
// enters an empty leaf but a process orch starts in it: it stays empty.
func (g *leafCgroup) reuse() {
	c := g.run
	c.mu.Lock()
	c.free = append(c.free, g)
	c.mu.Unlock()
}

func (g *leafCgroup) closeFiles() {
	_ = syscall.Close(g.fd)
	if g.events >= 0 {
		_ = syscall.Close(g.events)
	}
}

// close kills whatever is left in the run's cgroup and removes it. It
// returns the pids it killed.
func (c *RunCgroup) close() []int {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	free := c.free
	c.free = nil
	c.mu.Unlock()
	for _, g := range free {
		g.closeFiles()
	}
	// The lock goes last: a cgroup that could not be removed is left to a
	// later run's removeLeft, once empty.
	defer syscall.Close(c.lock)
	if !populated(c.dir) && c.removeEmpty(free) {
		return nil
	}
	return removeCgroupTree(c.dir)
}

// removeEmpty removes the run's cgroup, empty (no live process in it or
// below, and none can enter: only orch starts processes in it): its free
// leaves, then it. That is every leaf when each process ended by itself,
// as in most runs; no walk of the tree and no cgroup.procs read is needed
// then. It reports whether the cgroup is gone: a leaf it does not know of
// keeps it, and removeCgroupTree removes the rest.
func (c *RunCgroup) removeEmpty(free []*leafCgroup) bool {
	for _, g := range free {
		_ = os.Remove(g.dir)
	}
	return os.Remove(c.dir) == nil
}

// cgroupProcs reads a cgroup's cgroup.procs.
func cgroupProcs(dir string) []int {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// killCgroup kills every process in the cgroup and its children (cgroup.kill)
// and waits (up to 5s) until none is left, reaping those that were orch's
// children. It reports whether the cgroup is empty.
func killCgroup(dir string) bool {
	if !populated(dir) {
		return true
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0); err != nil {
		return false
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if !populated(dir) {
			return true
		}
	}
	return false
}

// populated reports whether a live process is in the cgroup or below it.
func populated(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.events"))
	if err != nil {
		return false // gone
	}
	return !bytes.Contains(b, []byte("populated 0"))
}

// cgroupTreeWalks counts removeCgroupTree's walks, for tests.
var cgroupTreeWalks atomic.Int64

// removeCgroupTree kills everything in cgroup dir and below, then removes
// the directories, leaves first. It returns the pids that were killed.
func removeCgroupTree(dir string) []int {
	cgroupTreeWalks.Add(1)
	var dirs []string
	var pids []int
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, path)
			pids = append(pids, cgroupProcs(path)...)
		}
		return nil
	})
	if !killCgroup(dir) {
		pids = nil // not all died: say nothing rather than something untrue
	}
	reapOrphans(pids)
	for i := len(dirs) - 1; i >= 0; i-- {
		_ = os.Remove(dirs[i])
	}
	return pids
}

// findRunCgroups finds the cgroups a run's owners made, wherever in the
// hierarchy those owners were: for orch stop and orch resume after the
// owner died. It looks next to its own cgroup first, then through the
// hierarchy. An orch from before the names' suffix named its cgroup
// orch-run-RUN: that name is the run's too.
func findRunCgroups(runID string) []string {
	if runID == "" || strings.ContainsAny(runID, "/\n\x00") {
		return nil
	}
	ofRun := func(name string) bool { return name == cgroupPrefix+runID || runOfCgroup(name) == runID }
	var out []string
	if own := ownCgroupDir(); own != "" {
		entries, _ := os.ReadDir(own)
		for _, e := range entries {
			if e.IsDir() && ofRun(e.Name()) {
				out = append(out, filepath.Join(own, e.Name()))
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	mnt := cgroup2Mount()
	if mnt == "" {
		return nil
	}
	_ = filepath.WalkDir(mnt, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil || !d.IsDir():
			return nil
		case ofRun(d.Name()):
			out = append(out, path)
			return fs.SkipDir
		case strings.HasPrefix(d.Name(), cgroupPrefix):
			return fs.SkipDir // another run's
		}
		return nil
	})
	return out
}
