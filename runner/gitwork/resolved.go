package gitwork

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/sched"
)

// The check of a merge's problem once a resolver (or the person) worked on
// it: no conflict marker left, the merge that stopped committed.

// resolved checks what a resolver (or the person) left for problem p: no
// conflict marker in the files of the problem or in any file changed, the
// merge that stopped either in progress or committed by them; then commits
// it. A problem comes back when it is not resolved.
func (t *MergeTree) resolved(ctx context.Context, p *sched.MergeProblem, by string) (*sched.MergeProblem, error) {
	inMerge := false
	if _, err := t.git(ctx, "rev-parse", "--verify", "--quiet", "MERGE_HEAD"); err == nil {
		inMerge = true
	}
	if p.Kind != "verify" && !inMerge && t.Pending != nil {
		if head, err := t.git(ctx, "rev-parse", "--verify", "HEAD"); err != nil {
			return nil, err
		} else if !t.isAncestor(ctx, t.Pending.Commit, head) {
			return &sched.MergeProblem{Kind: "abandoned", Files: p.Files,
				Reason: fmt.Sprintf("the merge of %s's branch is no longer in progress in %s and was not committed (git merge --abort?)", t.Pending.Task, t.Path)}, nil
		}
	}
	changed, err := t.changed(ctx)
	if err != nil {
		return nil, err
	}
	files := union(p.Files, changed)
	if marked := t.markers(files); len(marked) > 0 {
		return &sched.MergeProblem{Kind: "markers", Files: marked, Tasks: p.Tasks, Output: p.Output,
			Reason: fmt.Sprintf("conflict markers remain in %s (%s)", strings.Join(marked, ", "), t.Path)}, nil
	}
	if !inMerge && len(changed) == 0 {
		t.note(record.MergeResolved, "resolved by "+by+" (nothing left to commit)", record.MergeData{})
		return nil, nil
	}
	if _, err := t.git(ctx, "add", "--all", "--", "."); err != nil {
		return nil, err
	}
	msg := fmt.Sprintf("orch: %s: the verify command fixed by %s", t.What, by)
	if inMerge && t.Pending != nil {
		msg = fmt.Sprintf("orch: merge %s's branch %s (%s), conflicts resolved by %s", t.Pending.Task, t.Pending.Branch, t.What, by)
	}
	if _, err := t.git(ctx, "commit", "--quiet", "--no-verify", "--allow-empty", "-m", msg); err != nil {
		return nil, err
	}
	commit, _ := t.git(ctx, "rev-parse", "--verify", "HEAD")
	t.note(record.MergeResolved, "resolved by "+by, record.MergeData{Commit: commit})
	return nil, nil
}

// unmerged lists the files in conflict.
func (t *MergeTree) unmerged(ctx context.Context) ([]string, error) {
	out, err := t.git(ctx, "diff", "--name-only", "--diff-filter=U")
	if err != nil || out == "" {
		return nil, err
	}
	return strings.Split(out, "\n"), nil
}

// changed lists the files that differ from HEAD, untracked ones included.
func (t *MergeTree) changed(ctx context.Context) ([]string, error) {
	tracked, err := t.git(ctx, "diff", "--name-only", "HEAD")
	if err != nil {
		return nil, err
	}
	untracked, err := t.git(ctx, "ls-files", "--others", "--exclude-standard")
	if err != nil {
		return nil, err
	}
	return union(Lines(tracked), Lines(untracked)), nil
}

// collided names, among the branches merged so far, those that changed one
// of files since they parted from s, then s's task.
func (t *MergeTree) collided(ctx context.Context, merged []sched.MergeSource, s sched.MergeSource, files []string) []string {
	var out []string
	for _, h := range merged {
		args := append([]string{"rev-list", "-1", s.Commit + ".." + h.Commit, "--"}, files...)
		if c, err := t.git(ctx, args...); err == nil && c != "" {
			out = append(out, h.Task)
		}
	}
	return append(out, s.Task)
}

// markers lists the files (of the worktree) that hold a conflict marker: a
// line that starts with <<<<<<< or >>>>>>>.
func (t *MergeTree) markers(files []string) []string {
	var out []string
	for _, f := range files {
		if hasMarker(filepath.Join(t.Path, f)) {
			out = append(out, f)
		}
	}
	return out
}

// hasMarker reads the file a line at a time, however long its lines (a
// minified file): only the start of each line is looked at.
func hasMarker(path string) bool {
	fh, err := os.Open(path)
	if err != nil {
		return false // deleted: no marker left
	}
	defer fh.Close()
	r := bufio.NewReader(fh)
	start := true // the piece read starts a line
	for {
		piece, more, err := r.ReadLine()
		if start && isMarker(piece) {
			return true
		}
		if err != nil {
			return false
		}
		start = !more
	}
}

// isMarker: line (or the start of a long one) is a conflict marker's.
func isMarker(line []byte) bool {
	for _, m := range []string{"<<<<<<<", ">>>>>>>"} {
		if string(line) == m || strings.HasPrefix(string(line), m+" ") {
			return true
		}
	}
	return false
}
