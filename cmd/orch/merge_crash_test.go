//go:build linux

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// mergeRepo makes the test's repository, repo/, with f.txt and the
// cuelist, all committed.
func mergeRepo(c *ctl, cuelist string) string {
	c.t.Helper()
	c.write("repo/f.txt", "base\n")
	spec := c.write("repo/cuelist.yaml", cuelist)
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"},
		{"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "init"}} {
		if out, err := c.gitIn("repo", args...); err != nil {
			c.t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return spec
}

func (c *ctl) gitIn(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = c.path(dir)
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// waitForFile waits until the test's file name exists.
func (c *ctl) waitForFile(name string, p *orchProc) {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(c.path(name)); err == nil {
			return
		}
		if p.exited() {
			c.t.Fatalf("orch ended before %s appeared\n%s", name, p.output())
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.t.Fatalf("%s did not appear within 30s\n%s", name, p.output())
}

// TestMergeCrashResume kills orch (SIGKILL) in the middle of a merge —
// while a resolver works in the merge's worktree, the conflict markers in
// place, or while the verify command runs on the merged tree — then
// resumes the run: the dead owner's resolver (or verify command) is
// killed, what the merge's worktree held is kept on a branch of its own,
// the merge is taken up again from its branch and completes, and the cue
// goes on from it.
func TestMergeCrashResume(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, merge, mark string
		steps             string // the merge's steps after the resume, in order
		kept              bool   // the dead owner's worktree held something
	}{
		{name: "resolver", merge: "{agent: fixer}", mark: "fixer.started", kept: true,
			steps: "started kept conflict resolving checking resolved completed"},
		{name: "verify", merge: "{agent: fixer, verify: [sh, -c, 'if [ ! -e @DIR@/verify.started ]; then echo $$ > @DIR@/verify.pid; touch @DIR@/verify.started; sleep 60; fi']}", mark: "verify.started",
			steps: "started verified completed"}, // merged before the crash: only verified again
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newCtl(t)
			spec := mergeRepo(c, strings.ReplaceAll(`cuelist:
  id: crash
  defaults: {kill_grace: 200ms}
  cues:
    - {id: A, agents: [impl-a]}
    - {id: B, agents: [impl-b]}
    - {id: C, agents: [review], dependencies: [A, B], merge: `+tc.merge+`}
---
agent: {id: impl-a, run: "echo from a > f.txt", workspace: worktree}
---
agent: {id: impl-b, run: "echo from b > f.txt", workspace: worktree}
---
agent: {id: review, run: "cat f.txt > seen.txt", workspace: worktree}
---
agent:
  id: fixer
  run: |
    if [ "$(cat @DIR@/fixer.runs 2>/dev/null)" = "" ] && [ ! -e @DIR@/verify.pid ] && [ "@MARK@" = fixer.started ]; then
      echo 1 > @DIR@/fixer.runs; echo $$ > @DIR@/fixer.pid; echo half > f.txt; touch @DIR@/fixer.started; sleep 60
    fi
    echo resolved > f.txt
`, "@MARK@", tc.mark))
			p := c.start("run", spec)
			c.waitForFile(tc.mark, p)
			p.signal(syscall.SIGKILL)
			<-p.done
			pidFile := "fixer.pid"
			if tc.name == "verify" {
				pidFile = "verify.pid"
			}
			stdout, _ := c.mustOrch(exitOK, "resume", "last")
			if !strings.Contains(stdout, "process(es) left running by the run's previous owner") {
				t.Errorf("the dead owner's processes were not stopped:\n%s", stdout)
			}
			pid, err := strconv.Atoi(strings.TrimSpace(readFile(t, c.path(pidFile))))
			if err != nil || c.procAlive(pid) {
				t.Errorf("%s (pid %d, %v) outlived the resume", pidFile, pid, err)
			}

			code, out, _ := c.orch("status", "last", "--output", "json")
			if code != exitOK {
				t.Fatalf("status: exit %d", code)
			}
			var st struct {
				ID     string
				State  string
				Result *struct{ Branch string }
				Cues   []struct {
					ID       string
					State    string
					Attempts []struct {
						Number int
						Agent  string
						State  string
					}
				}
			}
			if err := json.Unmarshal([]byte(out), &st); err != nil {
				t.Fatal(err)
			}
			if st.State != "completed" || st.Result == nil {
				t.Fatalf("run %s, result %v:\n%s", st.State, st.Result, out)
			}
			var merges []string
			for _, cue := range st.Cues {
				for _, a := range cue.Attempts {
					if cue.ID == "C" && a.Agent == "orch:merge" {
						merges = append(merges, a.State)
					}
				}
			}
			if strings.Join(merges, " ") != "interrupted completed completed" { // the merge, again, then the result
				t.Errorf("C's merge attempts: %v", merges)
			}
			// The merge's steps after the resume, the first being what the
			// dead owner's worktree held, kept.
			code, events, _ := c.orch("events", "last", "--output", "json")
			if code != exitOK {
				t.Fatal("events")
			}
			var steps []string
			after := false
			for _, line := range strings.Split(strings.TrimSpace(events), "\n") {
				var e struct{ Type, State, Reason string }
				_ = json.Unmarshal([]byte(line), &e)
				if e.Type == "run/state" && strings.HasPrefix(e.Reason, "continued by") {
					after = true
				}
				if after && e.Type == "merge" && !strings.Contains(line, "/result") {
					steps = append(steps, e.State)
				}
			}
			if strings.Join(steps, " ") != tc.steps {
				t.Errorf("the merge's steps after the resume: %v, want %s", steps, tc.steps)
			}
			repo := c.path("repo")
			kept, _ := c.gitIn("repo", "for-each-ref", "--format=%(refname:short)", "refs/heads/orch/"+st.ID+"/C/")
			if strings.Contains(kept, "orch/"+st.ID+"/C/merge-kept-") != tc.kept {
				t.Errorf("kept of the dead owner's merge worktree (want %v): %s", tc.kept, kept)
			}
			if seen, _ := c.gitIn("repo", "show", st.Result.Branch+":seen.txt"); seen != "resolved" {
				t.Errorf("C saw %q", seen)
			}
			if list, _ := c.gitIn("repo", "worktree", "list"); strings.Count(list, "\n") != 0 {
				t.Errorf("worktrees left in %s:\n%s", repo, list)
			}
			if _, err := os.Stat(filepath.Join(repo, ".orch", "worktrees", st.ID)); !os.IsNotExist(err) {
				t.Errorf("the run's worktrees are still there: %v", err)
			}
		})
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
