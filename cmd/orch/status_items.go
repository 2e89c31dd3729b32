package main

import (
	"fmt"
	"strings"

	"github.com/orch-cli/orch/control"
	"github.com/orch-cli/orch/runner/store"
)

// A fan-out (a cue with for_each) is shown with its items' counts, each
// item under it (cueTree).

// itemsText is a fan-out's counts in a line: "3 items: 2 completed, 1 failed".
func itemsText(f *control.Items) string {
	var parts []string
	for _, p := range []struct {
		n    int
		what string
	}{{f.Completed, "completed"}, {f.Failed, "failed"}, {f.Stopped, "stopped"}, {f.Running, "running"}, {f.Pending, "pending"}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.what))
		}
	}
	if len(parts) == 0 {
		return fmt.Sprintf("%d items", f.Count)
	}
	return fmt.Sprintf("%d items: %s", f.Count, strings.Join(parts, ", "))
}

// fanOutReason is a fan-out's REASON in orch status: its items' counts,
// then its own reason (once over).
func fanOutReason(f *control.Items, c *store.CueDetail) string {
	if f == nil {
		return c.Reason
	}
	if c.Reason == "" || strings.HasPrefix(c.Reason, "fan-out: ") {
		return itemsText(f)
	}
	return itemsText(f) + "; " + c.Reason
}
