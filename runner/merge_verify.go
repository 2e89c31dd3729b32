package runner

import (
	"context"
	"fmt"
	"io"

	"github.com/orch-cli/orch/runner/driver"
	"github.com/orch-cli/orch/runner/gitwork"
	"github.com/orch-cli/orch/runner/proc"
	"github.com/orch-cli/orch/runner/sched"
)

// verifyTail is how many of the verify command's last lines a resolver (or
// the person) is given; all of them are in the merge attempt's log.
const verifyTail = 40

// runVerify runs the merge's verify command (argv, no shell) in the merged
// tree — the project root's place in the merge's worktree — as a process of
// the merge's attempt: its own process group, the attempt's token, its
// output in the attempt's log, its timeout the cue's. A failure is a
// problem holding the command's last lines.
func (m *merge) runVerify(ctx context.Context, r *run) (*sched.MergeProblem, error) {
	a := m.att
	r.sweeper.Begin(a.Token) // what carries its token is the verify command's, while it runs
	defer r.sweeper.End(a.Token)
	dir := (&workspace{path: m.tree.Path}).dirFor(m.tree.Repo, r.opts.ProjectRoot)
	s, err := proc.NewStdio(false)
	if err != nil {
		return nil, err
	}
	tail := &gitwork.Tail{Max: verifyTail}
	lines := func(stream string) func(io.Reader) {
		return driver.Lines(func(line string) { a.Log(stream, line); tail.Add(line) })
	}
	p, err := proc.Start(proc.Spec{Argv: m.verify, Dir: dir, Env: a.Env(), Token: a.Token, Stdio: s, Cgroup: r.sweeper.Cgroup(), Grace: r.grace})
	if err != nil {
		return &sched.MergeProblem{Kind: "verify", Reason: fmt.Sprintf("the verify command %s could not start: %v", quoteArgv(m.verify), err)}, nil
	}
	p.ReadOutput(lines("stdout"), lines("stderr"))
	return m.tree.Verified(ctx, p, m.verify, m.timeout, r.grace, tail, func(stopped bool) { driver.Sweep(a.Attempt, p, "verify", stopped) })
}
