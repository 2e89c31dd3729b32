package main

import (
	"context"
	"fmt"
	"time"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/runner/store"
)

// refuseCrossRunCooldown refuses a run on Temporal when one of its agents
// (or their fallbacks) is on a cooldown an earlier run recorded in the
// store. The workflow keeps cooldowns within its run only: it cannot read
// the store, so it would start the agent at once, which the local engine
// would not. (Cooldowns this run decides are kept within it, and recorded
// here by the follower for later local runs.)
func refuseCrossRunCooldown(ctx context.Context, db *store.DB, p *planner.Plan, now time.Time) error {
	seen := map[string]bool{}
	for _, c := range p.Order {
		queue := append([]string(nil), c.Agents...)
		for len(queue) > 0 {
			id := queue[0]
			queue = queue[1:]
			a := p.Agents[id]
			if a == nil || seen[id] {
				continue
			}
			seen[id] = true
			queue = append(queue, a.Fallback...)
			if a.Cooldown <= 0 {
				continue
			}
			until, err := db.CooldownUntil(ctx, id)
			if err != nil {
				return err
			}
			if until.After(now) {
				return &exitError{code: 2, msg: fmt.Sprintf("cue %s: agent %s is on a cooldown an earlier run recorded, until %s; --engine temporal keeps cooldowns within one run only and would not wait for it: start the run after that, or run it with --engine local",
					c.ID, id, until.Local().Format("2006-01-02 15:04:05"))}
			}
		}
	}
	return nil
}
