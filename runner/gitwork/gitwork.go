// Package gitwork is the git both engines run for workspace: worktree:
// git itself (argv, no shell, bounded, no prompt), the names of the
// attempts' branches, where an agent's workdir is in a worktree and the
// commit of what an attempt left. The local runner (runner/worktree.go,
// merge_git.go) and the Temporal workers (engine/temporal/worktree.go) use
// it alike, so a branch made on a worker is named and committed as one made
// locally.
package gitwork

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/orch-cli/orch/runner/attempt"
)

// Timeout bounds one git command (a worktree of a large repository takes
// a while to check out; a push or fetch goes over the network).
const Timeout = 5 * time.Minute

// Identity is what git runs with when orch commits: orch's identity, no
// hook, no signing, no recorded resolution replayed.
var Identity = []string{"-c", "user.name=orch", "-c", "user.email=orch@localhost", "-c", "commit.gpgsign=false",
	"-c", "core.hooksPath=" + os.DevNull, "-c", "rerere.enabled=false"}

// Git runs git with args in dir and returns its output, trimmed; its error
// names the command and says what git said.
func Git(ctx context.Context, dir string, args ...string) (string, error) {
	out, _, err := Run(ctx, dir, false, args...)
	return out, err
}

// Run runs git; with exit1 an exit status of 1 is no error but code 1
// (git merge-tree's "conflicts").
func Run(ctx context.Context, dir string, exit1 bool, args ...string) (string, int, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = env()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if exit1 && errors.As(err, &exit) && exit.ExitCode() == 1 {
			return strings.TrimSpace(out.String()), 1, nil
		}
		what := strings.TrimSpace(errOut.String())
		if ctx.Err() != nil {
			what = fmt.Sprintf("no answer in %s", Timeout)
		}
		if what == "" {
			what = err.Error()
		}
		return "", -1, fmt.Errorf("git %s (in %s): %s", strings.Join(args, " "), dir, what)
	}
	return strings.TrimSpace(out.String()), 0, nil
}

// env is orch's environment without what would point git elsewhere than
// the directory it runs in, and with no prompt for credentials.
func env() []string {
	var env []string
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_PREFIX", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GIT_TERMINAL_PROMPT=0")
}

// BranchPart makes a task id a branch name's part: a child's "/" and what
// git refuses in a ref ("..", a trailing "." or ".lock") become "_", and a
// fan-out item's brackets (which git refuses) "@": CUE[0] is CUE@0.
func BranchPart(id string) string {
	s := strings.NewReplacer("[", "@", "]", "").Replace(attempt.SafeName(id))
	if strings.Contains(s, "..") || strings.HasSuffix(s, ".") || strings.HasSuffix(s, ".lock") {
		s = strings.ReplaceAll(s, ".", "_")
	}
	return s
}

// Branch is the branch of attempt n of agent at cue in run: orch/RUN/CUE/N,
// with -AGENT when the cue has several agents (each has an attempt n).
func Branch(runID, cue, agent string, n int, severalAgents bool) string {
	b := fmt.Sprintf("orch/%s/%s/%d", runID, BranchPart(cue), n)
	if severalAgents {
		b += "-" + agent
	}
	return b
}

// DirIn maps dir, an agent's workdir, into worktree wt of repository repo
// when it is inside the repository (and checked in); else the attempt
// works at the worktree's top.
func DirIn(repo, wt, dir string) string {
	rel, err := filepath.Rel(repo, dir)
	if err != nil || !filepath.IsLocal(rel) {
		return wt
	}
	in := filepath.Join(wt, rel)
	if st, err := os.Stat(in); err != nil || !st.IsDir() {
		return wt
	}
	return in
}

// CommitLeft commits what agent left uncommitted in worktree wt at the end
// of its attempt and returns the commit the worktree is at (its base, if
// nothing was done).
func CommitLeft(wt, runID, cue, agent string, n int) (string, error) {
	ctx := context.Background()
	changes, err := Git(ctx, wt, "status", "--porcelain", "--untracked-files=all")
	if err != nil {
		return "", err
	}
	if changes != "" {
		if _, err := Git(ctx, wt, "add", "--all", "--", "."); err != nil {
			return "", err
		}
		msg := fmt.Sprintf("orch: run %s, cue %s, attempt %d (%s)\n\nWhat agent %s left uncommitted at the end of its attempt.", runID, cue, n, agent, agent)
		// orch's own identity, no hook and no signing: nothing may ask or
		// depend on the person's configuration.
		if _, err := Git(ctx, wt, append(append([]string(nil), Identity...),
			"commit", "--quiet", "--no-verify", "--author=orch <orch@localhost>", "-m", msg)...); err != nil {
			return "", err
		}
	}
	return Git(ctx, wt, "rev-parse", "--verify", "HEAD")
}

// ResultBranch is the run's result branch: orch/RUN/result, unless one of
// its cues is named result and would own orch/RUN/result/... (git keeps a
// ref and refs below it apart only by name): orch/RUN/_result then.
func ResultBranch(runID string, cues []string) string {
	for _, c := range cues {
		if strings.EqualFold(BranchPart(c), "result") {
			return "orch/" + runID + "/_result"
		}
	}
	return "orch/" + runID + "/result"
}
