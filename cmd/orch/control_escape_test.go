//go:build linux

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestControlNoSurvivors: an agent that leaves 23 descendants every way a
// process can try to outlive it (runner/testdata/descendants.sh: children
// and grandchildren in its process group, setsid escapees with its token,
// setsid env -i escapees without any, middles that exit so their children
// are reparented, shells that ignore SIGTERM) leaves none of them alive once
// orch has exited: after a normal end, a GO timeout, orch stop and SIGTERM,
// with a cgroup per run where the machine allows one, and without
// (ORCH_NO_CGROUP: the subreaper's sweeps of orphan trees).
func TestControlNoSurvivors(t *testing.T) {
	t.Parallel()
	script, err := filepath.Abs("../../runner/testdata/descendants.sh")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		mode    string // the agent's: exit (once its descendants run) or hang
		timeout string
		stop    func(c *ctl, owner *orchProc) *orchProc
		code    int
	}{
		{"normal-end", "exit", "60s", nil, 0},
		{"go-timeout", "hang", "8s", nil, 1},
		{"orch-stop", "hang", "60s", func(c *ctl, owner *orchProc) *orchProc { return c.start("stop", "last") }, 130},
		{"SIGTERM", "hang", "60s", func(c *ctl, owner *orchProc) *orchProc { owner.signal(syscall.SIGTERM); return nil }, 130},
	}
	for _, cgroup := range []bool{true, false} {
		for _, tt := range tests {
			name := tt.name + "/cgroup"
			if !cgroup {
				name = tt.name + "/tree-sweep"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				c := newCtl(t)
				if !cgroup {
					c.env = append(c.env, "ORCH_NO_CGROUP=1")
				}
				pidFile := c.path("pids")
				t.Cleanup(func() { // env -i escapees carry no mark: kill what is left by pid
					for _, pid := range descendantsAlive(readPidFile(pidFile)) {
						_ = syscall.Kill(pid, syscall.SIGKILL)
					}
				})
				file := c.write("cuelist.yaml", `
cuelist:
  id: survivors
  defaults: {ack_timeout: 10s, timeout: `+tt.timeout+`, kill_grace: 1s}
  cues:
    - {id: TREE, agents: [tree]}
---
agent:
  id: tree
  command: [sh, "`+script+`", "`+pidFile+`", `+tt.mode+`]
`)
				owner, pids := c.startDescendants(file, pidFile)
				var stopper *orchProc
				if tt.stop != nil {
					stopper = tt.stop(c, owner)
				}
				if code := owner.wait(60 * time.Second); code != tt.code {
					t.Errorf("orch run exited %d, want %d\n%s", code, tt.code, owner.output())
				}
				if stopper != nil {
					if code := stopper.wait(30 * time.Second); code != 0 {
						t.Errorf("orch stop exited %d\n%s", code, stopper.output())
					}
				}
				for _, pid := range descendantsAlive(pids) {
					t.Errorf("survived orch: %s", describe(pid))
				}
			})
		}
	}
}

// startDescendants starts orch run file, whose agent runs descendants.sh,
// and waits until the agent has started its 23 descendants; it returns the
// owner and the 24 pids.
func (c *ctl) startDescendants(file, pidFile string) (*orchProc, []int) {
	c.t.Helper()
	owner := c.start("run", file)
	c.waitFor(60*time.Second, "the agent's 23 descendants", func() bool {
		_, err := os.Stat(pidFile + ".ready")
		return err == nil || owner.exited()
	})
	pids := readPidFile(pidFile)
	if len(pids) != 24 {
		c.t.Fatalf("the agent recorded %d pids, want 24 (itself and 23 descendants)\n%s", len(pids), owner.output())
	}
	return owner, pids
}

// readPidFile reads the pids descendants.sh wrote, one a line.
func readPidFile(path string) []int {
	b, _ := os.ReadFile(path)
	var out []int
	for _, w := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(w); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// descendantsAlive lists which of pids are live processes (not zombies) of
// descendants.sh: its shells or its `sleep 7777`s (a reused pid is not).
func descendantsAlive(pids []int) []int {
	var out []int
	for _, pid := range pids {
		dir := "/proc/" + strconv.Itoa(pid)
		stat, err := os.ReadFile(dir + "/stat")
		if err != nil {
			continue
		}
		if i := bytes.LastIndexByte(stat, ')'); i < 0 || i+2 >= len(stat) || stat[i+2] == 'Z' || stat[i+2] == 'X' {
			continue
		}
		cmdline, _ := os.ReadFile(dir + "/cmdline")
		if bytes.Contains(cmdline, []byte("descendants.sh")) || bytes.Equal(cmdline, []byte("sleep\x007777\x00")) {
			out = append(out, pid)
		}
	}
	return out
}

// TestControlStopCueNoSurvivors: orch stop RUN CUE stops one cue whose agent
// left 23 descendants every way it can, while another cue goes on; once the
// stop has returned, none of the descendants outlives the subtree for long,
// with a cgroup and without one (issue 27, item 9: without a cgroup, the
// env -i escapees lived until the whole run ended).
func TestControlStopCueNoSurvivors(t *testing.T) {
	t.Parallel()
	script, err := filepath.Abs("../../runner/testdata/descendants.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, cgroup := range []bool{true, false} {
		name := "cgroup"
		if !cgroup {
			name = "tree-sweep"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := newCtl(t)
			if !cgroup {
				c.env = append(c.env, "ORCH_NO_CGROUP=1")
			}
			pidFile := c.path("pids")
			t.Cleanup(func() {
				for _, pid := range descendantsAlive(readPidFile(pidFile)) {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			})
			file := c.write("cuelist.yaml", `
cuelist:
  id: subtree
  defaults: {ack_timeout: 10s, timeout: 10m, kill_grace: 1s}
  cues:
    - {id: TREE, agents: [tree]}
    - {id: OTHER, agents: [other]}
---
agent:
  id: tree
  command: [sh, "`+script+`", "`+pidFile+`", hang]
---
agent:
  id: other
  command: [sh, -c, 'while [ ! -e "@DIR@/other.done" ]; do sleep 0.05; done']
`)
			owner, pids := c.startDescendants(file, pidFile)
			c.mustOrch(0, "stop", "last", "TREE")
			// A hang guard, not a measure: the sweeps look once a second.
			deadline := time.Now().Add(20 * time.Second)
			for len(descendantsAlive(pids)) > 0 && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
			}
			for _, pid := range descendantsAlive(pids) {
				t.Errorf("survived the stop of its subtree (the run goes on): %s", describe(pid))
			}
			if owner.exited() {
				t.Fatalf("the run ended with its subtree\n%s", owner.output())
			}
			c.write("other.done", "")
			if code := owner.wait(60 * time.Second); code != 1 {
				t.Errorf("orch run exited %d, want 1 (a cue was stopped)\n%s", code, owner.output())
			}
		})
	}
}
