package runner

import (
	"context"
	"sync"
	"time"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/driver"
	"github.com/orch-cli/orch/runner/proc"
	"github.com/orch-cli/orch/runner/record"
)

// host is what an attempt sees of the run it belongs to: a few facts, and
// the services of hostServices. It never sees the run itself (its
// scheduling, its pending decisions); its driver sees less (driver.Host).
type host struct {
	id      string
	plan    *planner.Plan
	grace   time.Duration   // the kill grace
	workDir string          // ORCH_OUTPUT files
	sweeper *proc.Sweeper   // every process an attempt starts is swept
	active  *sync.WaitGroup // attempt goroutines: the run waits for them
	agents  *driver.Agents  // the agents' processes that serve attempt after attempt (jsonl, acp)
	// worktrees are where attempts of workspace: worktree agents work (nil
	// when no agent of the plan has one).
	worktrees *worktrees
	mcp       *mcpEndpoint // orch's MCP tools for the run's agents
	hostServices
}

// hostServices are the run's services to its attempts (implemented by run):
// recording, and the hub that serves their requests. An attempt gives its
// driver what it needs of them (attempt_host.go).
type hostServices interface {
	// publish records events now and shows them (notes, messages).
	publish(ctx context.Context, events ...record.Event) error
	// newLogCap budgets an attempt's output in the store.
	newLogCap() *logCap
	// blackboard reads the run's board as it is now.
	blackboard() (map[string]record.BlackboardEntry, error)
	// agentEnv is the environment an agent's processes start with.
	agentEnv(a *attemptRun) []string
	// serve answers one of an agent's requests during GO (the hub).
	serve(a *attemptRun, peer driver.Peer, wm *driver.Wire, more func() *driver.Wire) *attempt.Failure
	// askPerson asks a question for an agent that is not a jsonl one (an
	// ACP permission request): deliver gets the answer.
	// The answer is one of options when there are some (PickOption).
	askPerson(a *attemptRun, b protocols.QuestionAsk, options []record.QuestionOption, deliver func(answer string)) *attempt.Failure
	// withdrawQuestions closes the open questions of an attempt that ended.
	withdrawQuestions(a *attemptRun)
	// endWatch ends the blackboard watch of an attempt that ended.
	endWatch(a *attemptRun)
	// endTask records how an attempt's task ended.
	endTask(n *node, how string)
	// addUsage records what an attempt reported it used so far (cost,
	// tokens, credits: its totals) and counts it toward the run's limits.
	// Drivers call it from the attempt's goroutine.
	addUsage(a *attemptRun, u record.Usage)
	loopGuard() loopLimits
}

// runHost is the run as its agents' processes see it (driver.RunHost).
type runHost struct{ r *run }

func (h runHost) Publish(events ...record.Event) error {
	return h.r.publish(context.Background(), events...)
}

func (h runHost) NewLog() driver.Log { return h.r.newLogCap() }
