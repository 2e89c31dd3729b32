// Command example is a complete `protocol: jsonl` agent for orch, in Go: it
// greets whoever the task's "name" input names. Try it by hand:
//
//	echo '{"message_type":"coord.go","id":"g1","cue_id":"C1","task":{"cue_id":"C1","inputs":{"name":"Ada"}}}' |
//		go run ./protocols/agent/example
package main

import (
	"context"
	"errors"

	"github.com/orch-cli/orch/protocols/agent"
)

func main() {
	agent.Run(func(ctx context.Context, t *agent.Task) (map[string]any, error) {
		t.Logf("working on %s", t.CueID) // stderr: stdout carries the protocol
		name := t.Input("name")
		if name == "" {
			return nil, errors.New("input name is missing")
		}
		return map[string]any{"greeting": "hello " + name}, nil
	})
}
