package scriptagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/orch-cli/orch/protocols/agent"
)

// The steps of the later board and memory requests:
//
//	{"bb_write_if": {"key": K, "value": V, "expected": N}}  -> outputs["wrote_K"] = version,
//	                                          or outputs["conflict_K"] = {current_version, author}
//	{"watch": {"keys": [...], "prefix": P}}   blackboard.watch
//	{"await_changes": N}                      -> outputs["changes"] = [{key, version, author, value}] (up to 30 s)
//	{"memory_delete": K}                      memory.delete
//	{"snapshot_authors": true}                -> outputs["snapshot"] = {K: "vN by AUTHOR"} of the GO task
func (s *state) boardOp(ctx context.Context, op string, arg json.RawMessage) (bool, error) {
	t := s.t
	switch op {
	case "bb_write_if":
		var a struct {
			Key      string `json:"key"`
			Value    any    `json:"value"`
			Expected int64  `json:"expected"`
		}
		if err := json.Unmarshal(arg, &a); err != nil {
			return true, err
		}
		v, err := t.BlackboardWriteIf(ctx, a.Key, a.Value, a.Expected)
		var c *agent.ConflictError
		switch {
		case errors.As(err, &c):
			s.outputs["conflict_"+a.Key] = map[string]any{"current_version": c.CurrentVersion, "author": c.Author}
		case err != nil:
			return true, err
		default:
			s.outputs["wrote_"+a.Key] = v
		}
	case "watch":
		var a struct {
			Keys   []string `json:"keys"`
			Prefix string   `json:"prefix"`
		}
		if err := json.Unmarshal(arg, &a); err != nil {
			return true, err
		}
		return true, t.Watch(ctx, a.Keys, a.Prefix)
	case "await_changes":
		var n int
		_ = json.Unmarshal(arg, &n)
		got, _ := s.outputs["changes"].([]any)
		timeout := time.After(30 * time.Second)
		for len(got) < n {
			select {
			case c := <-t.Changes():
				got = append(got, map[string]any{"key": c.Key, "version": c.Version, "author": c.Author, "value": c.Value})
				s.outputs["changes"] = got
			case <-timeout:
				return true, fmt.Errorf("%d of %d blackboard changes within 30s", len(got), n)
			case <-ctx.Done():
				return true, ctx.Err()
			}
		}
		s.outputs["changes"] = got
	case "memory_delete":
		var key string
		_ = json.Unmarshal(arg, &key)
		return true, t.MemoryDelete(ctx, key)
	case "snapshot_authors":
		snap := map[string]any{}
		for k, e := range t.BlackboardEntries {
			snap[k] = fmt.Sprintf("v%d by %s", e.Version, e.Author)
		}
		s.outputs["snapshot"] = snap
	default:
		return false, nil
	}
	return true, nil
}
