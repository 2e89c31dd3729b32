package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/protocols/agent"
)

// TestBoardRequests: a fenced write that wins and one that loses, a watch
// and the notice it brings, and a memory delete, through a fake orch.
func TestBoardRequests(t *testing.T) {
	f := serve(t, func(ctx context.Context, t *agent.Task) (map[string]any, error) {
		out := map[string]any{}
		v, err := t.BlackboardWriteIf(ctx, "plan", "draft", 0)
		if err != nil {
			return nil, err
		}
		out["version"] = v
		_, err = t.BlackboardWriteIf(ctx, "plan", "mine", 1)
		var c *agent.ConflictError
		if !errors.As(err, &c) {
			return nil, err
		}
		out["conflict"] = err.Error()
		if err := t.Watch(ctx, []string{"plan"}, "review/"); err != nil {
			return nil, err
		}
		select {
		case ch := <-t.Changes():
			out["changed"] = []any{ch.Key, ch.Version, ch.Author, ch.Value}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if err := t.MemoryDelete(ctx, "lesson"); err != nil {
			return nil, err
		}
		return out, nil
	})
	var sent []string
	goReq := f.send(protocols.New(goMsg(nil)))
	done := f.answerUntilDone(goReq, func(m protocols.Message) protocols.Body {
		sent = append(sent, m.Type)
		switch b := m.Body.(type) {
		case protocols.BlackboardWrite:
			if b.ExpectedVersion == nil {
				t.Errorf("write without expected_version: %+v", b)
				return protocols.ProtocolError{Reason: "no expected_version"}
			}
			if *b.ExpectedVersion == 0 {
				return protocols.BlackboardAck{Key: b.Key, Version: 1}
			}
			return protocols.BlackboardConflict{Key: b.Key, CurrentVersion: 2, Author: "researcher"}
		case protocols.BlackboardWatch:
			f.send(protocols.Reply(m, protocols.BlackboardWatching{Keys: b.Keys, Prefix: b.Prefix}))
			f.send(protocols.New(protocols.BlackboardChanged{CueID: "CUE-1", Key: "plan", Version: 3, Author: "reviewer", Value: "final"}))
			return nil
		case protocols.MemoryDelete:
			return protocols.MemoryAck{Key: b.Key}
		}
		return nil
	})
	if done.Type != protocols.TypeTaskComplete {
		t.Fatalf("GO ended with %s: %+v", done.Type, done.Body)
	}
	out := done.Body.(protocols.TaskComplete).Outputs
	want := map[string]any{
		"version":  1.0,
		"conflict": `blackboard key "plan" is at version 2 (by researcher), not 1: not written`,
		"changed":  []any{"plan", 3.0, "reviewer", "final"},
	}
	for k, w := range want {
		if !equalJSON(out[k], w) {
			t.Errorf("%s = %#v, want %#v", k, out[k], w)
		}
	}
	if got := strings.Join(sent, " "); got != "blackboard.write blackboard.write blackboard.watch memory.delete" {
		t.Errorf("requests: %s", got)
	}
}
