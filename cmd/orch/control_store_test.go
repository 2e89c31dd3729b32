//go:build linux

package main

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The run database held or taken away by another process (issue 27, items
// 1 and 2): orch never hangs on it, never claims a run it could not record,
// and a signal always ends it.

// lockHolder is another process holding the database's write lock.
type lockHolder struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

// holdLock starts orch-hold-lock on the test's database and waits until it
// holds the write lock.
func (c *ctl) holdLock() *lockHolder {
	c.t.Helper()
	cmd := exec.Command(filepath.Join(c.dir, "bin", "orch-hold-lock"), c.db)
	// Not the test's mark: the holder is no agent, and alive() must not
	// count it.
	for _, kv := range c.env {
		if !strings.HasPrefix(kv, markVar+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		c.t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		c.t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	h := &lockHolder{cmd: cmd, stdin: stdin}
	c.t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	held := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		held <- line
	}()
	select {
	case line := <-held:
		if strings.TrimSpace(line) != "held" {
			c.t.Fatalf("orch-hold-lock did not take the lock: %q", line)
		}
	case <-time.After(30 * time.Second):
		c.t.Fatal("orch-hold-lock did not take the lock within 30s")
	}
	return h
}

func (h *lockHolder) pid() int { return h.cmd.Process.Pid }

// release commits the holder's transaction and waits for it to exit.
func (h *lockHolder) release(t *testing.T) {
	t.Helper()
	h.stdin.Close()
	if err := h.cmd.Wait(); err != nil {
		t.Fatalf("orch-hold-lock: %v", err)
	}
}

// startInGo starts orch run file and waits until cue is in GO and its agent
// has written its pid to pidFile (in the test's directory); it returns the
// owner and the agent's pid.
func (c *ctl) startInGo(file, cue, pidFile string) (*orchProc, []int) {
	c.t.Helper()
	owner := c.start("run", file)
	c.waitInGo(owner, 30*time.Second, cue)
	c.waitFor(10*time.Second, "the agent to write its pid", func() bool { _, err := os.Stat(c.path(pidFile)); return err == nil })
	return owner, c.readPids(pidFile)
}

// setEnv sets (or replaces) one variable of the environment of the orch
// processes the test starts.
func (c *ctl) setEnv(key, value string) {
	for i, kv := range c.env {
		if strings.HasPrefix(kv, key+"=") {
			c.env[i] = key + "=" + value
			return
		}
	}
	c.env = append(c.env, key+"="+value)
}

// TestControlLockHeldPausesTheRun: another process takes the database's
// write lock while a cue runs, and is suspended holding it (as Ctrl-Z stops
// an orch in the middle of a commit) for 12s, longer than SQLite's busy
// timeout but within the lock timeout given (60s). The cue ends meanwhile:
// its end cannot be recorded, so nothing is acted on (the next cue does not
// start) and the run does not fail; once the holder goes on and lets go,
// the run continues and completes, its log whole.
func TestControlLockHeldPausesTheRun(t *testing.T) {
	t.Parallel()
	c := newCtl(t)
	c.setEnv("ORCH_LOCK_TIMEOUT", "60s") // the pause below is far shorter
	file := c.write("cuelist.yaml", `
cuelist:
  id: pause
  defaults: {kill_grace: 1s}
  cues:
    - {id: A, agents: [first]}
    - {id: B, agents: [second], dependencies: [A]}
---
agent:
  id: first
  command: [sh, -c, 'while [ ! -e "@DIR@/a.done" ]; do echo waiting; sleep 0.05; done']
---
agent:
  id: second
  command: [sh, -c, 'touch "@DIR@/b.started"']
`)
	owner := c.start("run", file)
	c.waitInGo(owner, 30*time.Second, "A")
	h := c.holdLock()
	if err := syscall.Kill(h.pid(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	c.write("a.done", "")
	// A ends now; the run must not act on it, nor give up.
	time.Sleep(12 * time.Second)
	if _, err := os.Stat(c.path("b.started")); err == nil {
		t.Fatal("B started while its dependency's end could not be recorded")
	}
	if owner.exited() {
		t.Fatalf("orch run ended (exit %d) while the lock was held for 12s of its 60s lock timeout\n%s", owner.code, owner.output())
	}
	if err := syscall.Kill(h.pid(), syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	h.release(t)
	if code := owner.wait(60 * time.Second); code != 0 {
		t.Fatalf("orch run exited %d after the lock was let go, want 0\n%s", code, owner.output())
	}
	if _, err := os.Stat(c.path("b.started")); err != nil {
		t.Error("B never ran")
	}
	if st := c.status("last"); st.State != "completed" {
		t.Errorf("the run is %s (%s), want completed", st.State, st.Reason)
	}
	checkSeqs(t, c.events("last"))
	integrityCheck(t, c.db)
}

// TestControlLockHeldTooLong: another process holds the write lock past
// the lock timeout. orch stops every agent and exits 1 naming the cause and
// the holder's pid; the run is resumable once the lock is let go.
func TestControlLockHeldTooLong(t *testing.T) {
	t.Parallel()
	c := newCtl(t)
	c.setEnv("ORCH_LOCK_TIMEOUT", "2s")
	file := c.write("cuelist.yaml", `
cuelist:
  id: held
  defaults: {kill_grace: 1s, timeout: 10m}
  cues:
    - {id: CHATTY, agents: [chatty]}
---
agent:
  id: chatty
  command: [sh, -c, 'echo $$ > "@DIR@/chatty.pid"; while [ ! -e "@DIR@/done" ]; do echo chatter; sleep 0.05; done']
`)
	owner, pids := c.startInGo(file, "CHATTY", "chatty.pid")
	id := c.status("last").ID
	h := c.holdLock()
	held := time.Now()
	if code := owner.wait(60 * time.Second); code != 1 { // a hang guard, not a measure
		t.Errorf("orch run exited %d with the database locked, want 1\n%s", code, owner.output())
	}
	t.Logf("orch run exited %s after the lock was taken (lock timeout 2s, kill_grace 1s)", time.Since(held).Round(10*time.Millisecond))
	stderr := owner.stderr.String()
	for _, want := range []string{"run " + id + " could not be recorded",
		"the database is locked by another process (pid " + strconv.Itoa(h.pid()) + ")",
		"orch resume " + id + " continues the run"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("orch run's stderr does not say %q\n%s", want, owner.output())
		}
	}
	c.waitFor(10*time.Second, "the agent to be gone", func() bool { return len(c.alive(pids)) == 0 })

	h.release(t)
	c.write("done", "")
	c.mustOrch(0, "resume", id)
	if st := c.status(id); st.State != "completed" {
		t.Errorf("after orch resume the run is %s (%s), want completed", st.State, st.Reason)
	}
	integrityCheck(t, c.db)
}

// TestControlLockHeldSignal: SIGTERM or SIGINT ends orch within kill_grace
// and a little, whatever the store does: here another process holds the
// write lock for far longer than that (the lock timeout is a minute), and
// the agent ignores SIGTERM, so it takes the whole kill grace.
func TestControlLockHeldSignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			c := newCtl(t)
			c.setEnv("ORCH_LOCK_TIMEOUT", "5m")
			file := c.write("cuelist.yaml", `
cuelist:
  id: sig
  defaults: {kill_grace: 1s, timeout: 10m}
  cues:
    - {id: STUBBORN, agents: [stubborn]}
---
agent:
  id: stubborn
  command: [sh, -c, 'trap "" TERM INT; echo $$ > "@DIR@/stubborn.pid"; while :; do echo still here; sleep 0.05; done']
`)
			owner, pids := c.startInGo(file, "STUBBORN", "stubborn.pid")
			h := c.holdLock()
			time.Sleep(1500 * time.Millisecond) // the owner's writes now wait for the lock
			owner.signal(sig)
			sent := time.Now()
			// A hang guard far below the lock timeout: before this fix orch
			// waited for the lock to go.
			code := owner.wait(30 * time.Second)
			t.Logf("orch run exited %d %s after %s with the database locked (kill_grace 1s)", code, time.Since(sent).Round(10*time.Millisecond), sig)
			if code != 1 {
				t.Errorf("orch run exited %d, want 1 (the stop could not be recorded)\n%s", code, owner.output())
			}
			if !strings.Contains(owner.stderr.String(), "the database is locked by another process (pid "+strconv.Itoa(h.pid())+")") {
				t.Errorf("orch run's stderr does not name the lock's holder\n%s", owner.output())
			}
			if left := c.alive(pids); len(left) > 0 {
				t.Errorf("agent processes left running: %v", left)
			}
			h.release(t)
		})
	}
}

// TestControlDatabaseDeleted: the database (or all of .orch/) is deleted
// while a run is live. orch notices, stops every agent and exits 1 saying
// so, never "completed", and does not send the person to orch resume, which
// has nothing to continue.
func TestControlDatabaseDeleted(t *testing.T) {
	for _, what := range []string{"file", "directory"} {
		t.Run(what, func(t *testing.T) {
			t.Parallel()
			c := newCtl(t)
			dir := c.path(".orch")
			c.db = filepath.Join(dir, "orch.db")
			c.setEnv("ORCH_DB", c.db)
			file := c.write("cuelist.yaml", `
cuelist:
  id: deleted
  defaults: {kill_grace: 1s, timeout: 10m}
  cues:
    - {id: LONG, agents: [long]}
    - {id: QUICK, agents: [quick]}
---
agent:
  id: long
  command: [sh, -c, 'echo $$ > "@DIR@/long.pid"; while :; do sleep 0.05; done']
---
agent:
  id: quick
  command: [sh, -c, 'while [ ! -e "@DIR@/go" ]; do sleep 0.02; done']
`)
			owner, pids := c.startInGo(file, "LONG", "long.pid")
			c.waitInGo(owner, 30*time.Second, "QUICK")
			gone := c.db
			if what == "directory" {
				gone = dir
			}
			if err := os.RemoveAll(gone); err != nil {
				t.Fatal(err)
			}
			deleted := time.Now()
			c.write("go", "")                    // QUICK completes at once: its end goes into the deleted file
			code := owner.wait(60 * time.Second) // a hang guard, not a measure
			t.Logf("orch run exited %d %s after the database was deleted", code, time.Since(deleted).Round(10*time.Millisecond))
			if code != 1 {
				t.Errorf("orch run exited %d after its database was deleted, want 1\n%s", code, owner.output())
			}
			out := owner.stdout.String() + owner.stderr.String()
			if !strings.Contains(owner.stderr.String(), "the database "+c.db+" was deleted while orch was writing to it") {
				t.Errorf("orch run does not say the database was deleted\n%s", owner.output())
			}
			for _, never := range []string{"completed in", "orch resume"} {
				if strings.Contains(out, never) {
					t.Errorf("orch run says %q after its database was deleted\n%s", never, owner.output())
				}
			}
			if left := c.alive(pids); len(left) > 0 {
				t.Errorf("agent processes left running: %v", left)
			}
		})
	}
}

// TestControlDatabaseTruncated: the database is truncated under a live run.
// orch stops every agent and exits 1 saying the database is damaged, and
// does not send the person to orch resume, which cannot read it.
func TestControlDatabaseTruncated(t *testing.T) {
	t.Parallel()
	c := newCtl(t)
	file := c.write("cuelist.yaml", `
cuelist:
  id: truncated
  defaults: {kill_grace: 1s, timeout: 10m}
  cues:
    - {id: CHATTY, agents: [chatty]}
---
agent:
  id: chatty
  command: [sh, -c, 'echo $$ > "@DIR@/chatty.pid"; while :; do echo chatter; sleep 0.01; done']
`)
	owner, pids := c.startInGo(file, "CHATTY", "chatty.pid")
	c.waitFor(10*time.Second, "the database file to hold pages", func() bool { st, err := os.Stat(c.db); return err == nil && st.Size() >= 4096 })
	// The -wal may be gone for a moment (a checkpoint that truncates it):
	// the database file alone is then what is cut.
	walErr := os.Truncate(c.db+"-wal", 0)
	if errors.Is(walErr, os.ErrNotExist) {
		walErr = nil
	}
	if err := errors.Join(os.Truncate(c.db, 0), walErr); err != nil {
		t.Fatal(err)
	}
	truncated := time.Now()
	if code := owner.wait(60 * time.Second); code != 1 { // a hang guard, not a measure
		t.Fatalf("orch run exited %d after its database was truncated, want 1\n%s", code, owner.output())
	}
	t.Logf("orch run exited %s after its database was truncated", time.Since(truncated).Round(10*time.Millisecond))
	stderr := owner.stderr.String()
	if !strings.Contains(stderr, "the database "+c.db+" is damaged") {
		t.Errorf("orch run does not say the database is damaged\n%s", owner.output())
	}
	if strings.Contains(stderr, "orch resume") {
		t.Errorf("orch run sends the person to orch resume, which cannot read a damaged database\n%s", owner.output())
	}
	c.waitFor(10*time.Second, "the agent to be gone", func() bool { return len(c.alive(pids)) == 0 })
}

// TestControlDatabaseUnwritableWords: a database orch cannot create or write
// for want of space or write access says "full" or "read-only" (SQLite
// itself says "disk I/O error" or "unable to open database file"). It
// mounts small file systems: root only.
func TestControlDatabaseUnwritableWords(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	c := newCtl(t)
	file := c.write("cuelist.yaml", "cuelist:\n  id: words\n  cues:\n    - {id: A, agents: [ok]}\n---\nagent: {id: ok, command: [\"true\"]}\n")
	mount := func(name, opts string) string {
		dir := c.path(name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("mount", "-t", "tmpfs", "-o", opts, "tmpfs", dir).CombinedOutput(); err != nil {
			t.Skipf("cannot mount a tmpfs: %v %s", err, out)
		}
		t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
		return dir
	}
	runOn := func(db string) string {
		c.setEnv("ORCH_DB", db)
		code, stdout, stderr := c.orch("run", file)
		if code != 1 {
			t.Errorf("orch run with its database at %s: exit %d, want 1\n%s%s", db, code, stdout, stderr)
		}
		return stderr
	}

	// Room for the file, not for its -shm: SQLite says "disk I/O error".
	full := mount("full", "size=64k")
	if err := os.WriteFile(filepath.Join(full, "filler"), make([]byte, 48<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(full, "orch.db")
	if stderr := runOn(db); !strings.Contains(stderr, "the disk holding the database "+db+" is full") {
		t.Errorf("creating a database on a full disk says\n%s", stderr)
	}

	// A database on a file system remounted read-only: SQLite says "unable
	// to open database file".
	ro := mount("ro", "size=1m")
	db = filepath.Join(ro, "orch.db")
	c.setEnv("ORCH_DB", db)
	c.mustOrch(0, "run", file)
	if out, err := exec.Command("mount", "-o", "remount,ro", ro).CombinedOutput(); err != nil {
		t.Fatalf("remounting read-only: %v %s", err, out)
	}
	if stderr := runOn(db); !strings.Contains(stderr, "the database "+db+" is read-only") {
		t.Errorf("a database on a read-only file system says\n%s", stderr)
	}
}
