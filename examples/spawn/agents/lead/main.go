// Command lead is the spawn example's lead agent, written in Go with the
// protocols/agent library: it spawns one researcher per topic, goes on while
// they work, and combines their announcements into one summary.
package main

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/orch-cli/orch/protocols/agent"
)

func main() {
	agent.Run(func(ctx context.Context, t *agent.Task) (map[string]any, error) {
		topics := strings.Split(t.Input("topics"), ",")
		for _, topic := range topics {
			id, err := t.Spawn(ctx, "researcher", map[string]any{"topic": strings.TrimSpace(topic)})
			if err != nil {
				return nil, err
			}
			t.Logf("spawned %s for %q", id, topic)
		}
		var parts []string
		for range topics { // each child's end arrives as task.announce
			select {
			case a := <-t.Announcements():
				if a.Status != "completed" {
					return nil, fmt.Errorf("researcher %s %s: %s", a.TaskID, a.Status, a.Reason)
				}
				parts = append(parts, fmt.Sprint(a.Outputs["finding"]))
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		sort.Strings(parts) // the children end in any order
		return map[string]any{"summary": strings.Join(parts, "\n")}, nil
	})
}
