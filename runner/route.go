package runner

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/orch-cli/orch/runner/sched"
)

// route is where a message goes: its recipient's task, the attempt at work
// there, and the task it passes through (via; nil: the person running orch,
// above every cue's task). why says why it cannot be delivered.
type route struct {
	target  *node
	att     *attemptRun
	via     *node
	sibling bool // a sibling: delivered directly, the parent looks on
	why     string
}

// routeRequest asks the loop, which owns the task tree, where a message
// from a task goes (sched.Tasks.Route).
type routeRequest struct {
	from  *node
	to    string
	reply chan route
}

func (q routeRequest) serveOn(_ context.Context, r *run) {
	target, via, found, why := r.tasks.Route(q.from.ref, q.to)
	if !found {
		if why == "" {
			why = r.unknownRecipient(q.to)
		}
		q.reply <- route{why: why}
		return
	}
	rt := route{target: r.nodes[target], sibling: r.nodes[target].parent == q.from.parent}
	if via != sched.NoNode {
		rt.via = r.nodes[via]
	}
	rt.att, rt.why = r.tasks.Working(target)
	q.reply <- rt
}

// unknownRecipient says why no task of the run is named to: a cue or an
// agent of the plan that has no task yet has not started; anything else
// is unknown.
func (r *run) unknownRecipient(to string) string {
	for _, c := range r.plan.Order {
		if c.ID == to {
			return fmt.Sprintf("not started: cue %s has no task at work yet", to)
		}
	}
	if _, ok := r.plan.Agents[to]; ok {
		return fmt.Sprintf("not started: no task of agent %s has started", to)
	}
	ids := make([]string, 0, len(r.nodes))
	for _, n := range r.nodes {
		ids = append(ids, n.id+" ("+n.agent.ID+")")
	}
	sort.Strings(ids)
	if len(ids) > 10 {
		ids = append(ids[:10], "...")
	}
	return fmt.Sprintf("unknown: no task or agent of this run is named %q (tasks: %s)", to, strings.Join(ids, ", "))
}

// routeOf finds where a message from n to `to` goes.
func (r *run) routeOf(n *node, to string) route {
	reply := make(chan route, 1)
	rt, ok := call(r, routeRequest{from: n, to: to, reply: reply}, reply)
	if !ok {
		return route{why: errRunOver.Error()}
	}
	return rt
}
