//go:build linux

package main

import (
	"strings"
	"syscall"
	"testing"
)

// TestMergeCrashResumeItems: a merge of a fan-out's branches, taken up
// again by orch resume after orch was killed while a resolver worked, names
// the items as the run before the crash did (IMP[one], not IMP[0]): in its
// commit and in what the resolver is told.
func TestMergeCrashResumeItems(t *testing.T) {
	t.Parallel()
	c := newCtl(t)
	spec := mergeRepo(c, `cuelist:
  id: crash-items
  defaults: {kill_grace: 200ms}
  cues:
    - {id: IMP, agents: [impl], for_each: [{id: one}, {id: two}]}
    - {id: C, agents: [review], dependencies: [IMP], merge: {agent: fixer}}
---
agent: {id: impl, run: "echo \"$ORCH_ITEM\" > f.txt", workspace: worktree}
---
agent: {id: review, run: "cat f.txt > seen.txt", workspace: worktree}
---
agent:
  id: fixer
  run: |
    echo "$ORCH_INPUT_MERGE_REASON" >> @DIR@/fixer.reasons
    if [ ! -e @DIR@/fixer.started ]; then touch @DIR@/fixer.started; sleep 60; fi
    echo resolved > f.txt
`)
	p := c.start("run", spec)
	c.waitForFile("fixer.started", p)
	p.signal(syscall.SIGKILL)
	<-p.done
	c.mustOrch(exitOK, "resume", "last")
	subjects, err := c.gitIn("repo", "log", "--all", "--format=%s")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(subjects, "orch: merge IMP[two]'s branch") || strings.Contains(subjects, "IMP[1]") {
		t.Errorf("the merge's commit does not name the item IMP[two]:\n%s", subjects)
	}
	reasons := readFile(t, c.path("fixer.reasons"))
	if strings.Count(reasons, "IMP[two]'s branch") != 2 || strings.Contains(reasons, "IMP[1]") {
		t.Errorf("the resolver, before and after the resume, was told:\n%s", reasons)
	}
}
