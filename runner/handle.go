package runner

import (
	"context"
	"time"

	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/driver"
	"github.com/orch-cli/orch/runner/sched"
)

// reportKind says what an attempt (or a prompt) reports to the loop.
type reportKind int

const (
	repWarned   reportKind = iota + 1 // acknowledged WARNING
	repReady                          // acknowledged STANDBY
	repEnded                          // the attempt is over: completed, failed or stopped
	repApproval                       // a person answered the GO prompt
)

type report struct {
	kind    reportKind
	att     *attemptRun
	pos     int // repApproval: the cue's plan position
	ok      bool
	reply   *driver.Wire     // the agent's answer this report is about, recorded by the loop
	fail    *attempt.Failure // repEnded: nil on success
	outputs map[string]any
	pid     int
	exit    *int
	// merge reports (repMerge, repMergeAnswer; merge.go): the merge, the
	// round's end, the person's answer.
	merge  *merge
	merged sched.MergeReport
	text   string
	// taskEnded (repEnded of an attempt reporting to the loop): how its
	// task ended, recorded in the task tree before the report is applied.
	taskEnded string
}

// handle applies one report to the run's state.
func (r *run) handle(ctx context.Context, rep report) {
	if rep.kind == repApproval {
		r.core.ApprovalAnswered(rep.pos, rep.ok)
		r.apply(ctx, nil)
		return
	}
	if rep.merge != nil {
		r.handleMerge(ctx, rep)
		return
	}
	a := rep.att
	if rep.taskEnded != "" {
		r.tasks.End(a.node.ref, rep.taskEnded)
	}
	if rep.reply != nil { // stored before anything is decided on it
		r.emit(a.messageEvent("in", rep.reply))
	}
	if a.resolving != nil {
		r.handleMerge(ctx, rep)
		return
	}
	if r.atts[a.pos][a.slot] != a { // a stale report from an attempt already replaced
		return
	}
	switch rep.kind {
	case repWarned:
		r.core.Warned(a.pos, a.slot, a.Number)
	case repReady:
		r.core.Ready(a.pos, a.slot, a.Number)
	case repEnded:
		r.running--
		r.atts[a.pos][a.slot] = nil
		end := sched.End{Outputs: rep.outputs}
		if f := rep.fail; f != nil {
			end.Failed, end.Class, end.Reason = true, f.Class, f.Reason
			end.Retriable = sched.Retriable(a.Agent, f.Class) || f.Retry
		}
		r.core.Ended(time.Now(), a.pos, a.slot, a.Number, end)
	}
	r.apply(ctx, &rep)
}
