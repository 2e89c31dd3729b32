package main

import (
	"fmt"
	"strings"

	"github.com/orch-cli/orch/runner/record"
)

// describeMerge is the line of a merge's step (EvMerge).
func describeMerge(e record.Event) string {
	d, _ := e.Data.(record.MergeData) // nil data: the zero value
	head := fmt.Sprintf("%s %s#%d %s", e.Cue, e.Agent, e.Attempt, d.Branch)
	if d.Result != nil || strings.HasSuffix(d.Branch, "/result") || strings.HasSuffix(d.Branch, "/_result") {
		head = fmt.Sprintf("result %s#%d %s", e.Agent, e.Attempt, d.Branch)
	}
	switch e.State {
	case record.MergeStarted:
		return fmt.Sprintf("%s: %s", head, e.Reason)
	case record.MergeCompleted:
		s := fmt.Sprintf("%s: merged (%s)", head, shortSHA(d.Commit))
		if d.Result != nil {
			s += ", " + resultLine(d.Result)
		}
		return s
	case record.MergeVerifyFailed:
		return fmt.Sprintf("%s: %s", head, e.Reason)
	}
	if e.Reason == "" {
		return head + " " + e.State
	}
	return fmt.Sprintf("%s %s: %s", head, e.State, e.Reason)
}

// resultLine says where a run's result is: "result: orch/3f9a2b/result, 4
// commits ahead of main".
func resultLine(r *record.ResultBranch) string {
	commits := "commits"
	if r.Ahead == 1 {
		commits = "commit"
	}
	return fmt.Sprintf("result: %s, %d %s ahead of %s", r.Branch, r.Ahead, commits, r.Base)
}
