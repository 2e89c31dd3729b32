package attempt

import (
	"cmp"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/orch-cli/orch/spec"
)

// RenderPrompt is the prompt a coding agent gets at GO: the cue's prompt:
// (else its agent's), a text/template over the GO task as orch sends it to
// a jsonl agent; without one, a plain rendering of the task. When the agent
// provides keys other than text, one instruction asks for them.
func RenderPrompt(agent *spec.Agent, cuePrompt string, t *Task) (string, error) {
	text := cuePrompt
	if text == "" {
		text = agent.Prompt
	}
	var b strings.Builder
	if text == "" {
		plainTask(&b, t)
	} else {
		tmpl, err := spec.ParsePrompt("prompt", text)
		if err != nil { // orch validate reports it; a run never gets here
			return "", err
		}
		if err := tmpl.Execute(&b, promptData(t)); err != nil {
			return "", err
		}
	}
	if keys := jsonKeys(agent.Provides); len(keys) > 0 {
		fmt.Fprintf(&b, "\n\nEnd your reply with a JSON object holding these keys: %s.", strings.Join(keys, ", "))
	}
	return b.String(), nil
}

// promptData is the task as a prompt sees it: the fields of coord.go's task
// by their JSON names (.inputs.feature).
func promptData(t *Task) map[string]any {
	d := map[string]any{"run_id": t.RunID, "cue_id": t.CueID, "agent_id": t.AgentID, "attempt": t.Attempt,
		"inputs": orEmpty(t.Inputs), "blackboard": orEmpty(t.Blackboard), "handoff_context": orEmpty(t.HandoffContext),
		"task_id": t.TaskID, "parent_task_id": t.ParentTaskID, "depth": t.Depth}
	entries := map[string]any{}
	for k, e := range t.BlackboardEntries {
		entries[k] = map[string]any{"value": e.Value, "version": e.Version, "author": e.Author}
	}
	d["blackboard_entries"] = entries
	if t.Item != nil { // a fan-out's item: {{.item}}, and {{.<as>}}
		var v any
		_ = json.Unmarshal(t.Item, &v)
		d["item"] = v
		if t.ItemName != "" {
			d[t.ItemName] = v
		}
	}
	return d
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// plainTask writes the task for an agent without a prompt: what to do is
// in the cue's inputs, named and shown as they are.
func plainTask(b *strings.Builder, t *Task) {
	fmt.Fprintf(b, "Task %s (run %s, attempt %d).", t.CueID, t.RunID, t.Attempt)
	if t.ParentTaskID != "" {
		fmt.Fprintf(b, " It was given by task %s (depth %d).", t.ParentTaskID, t.Depth)
	}
	if t.Item != nil { // a fan-out's item: what this task is for
		var v any
		_ = json.Unmarshal(t.Item, &v)
		fmt.Fprintf(b, "\n\nIts item (%s): %s", cmp.Or(t.ItemName, "item"), PromptValue(v))
	}
	section := func(title string, m map[string]any, note func(k string) string) {
		if len(m) == 0 {
			return
		}
		fmt.Fprintf(b, "\n\n%s:", title)
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(b, "\n- %s: %s%s", k, PromptValue(m[k]), note(k))
		}
	}
	none := func(string) string { return "" }
	section("Inputs", t.Inputs, none)
	section("Handoff context", t.HandoffContext, none)
	section("Blackboard", t.Blackboard, func(k string) string { // who wrote what (seed 004 §2)
		if e, ok := t.BlackboardEntries[k]; ok && e.Author != "" {
			return fmt.Sprintf(" (version %d, by %s)", e.Version, e.Author)
		}
		return ""
	})
}

// PromptValue is a string as it is, anything else as JSON.
func PromptValue(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// jsonKeys are the provided keys a coding agent must put in a JSON object:
// all but text, its reply itself.
func jsonKeys(provides []string) []string {
	var keys []string
	for _, k := range provides {
		if k != "text" {
			keys = append(keys, k)
		}
	}
	return keys
}
