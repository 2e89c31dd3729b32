package temporal

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/redact"
	"github.com/orch-cli/orch/runner/sched"
	"github.com/orch-cli/orch/spec"
)

// Secrets on a worker. Whatever a worker sends its run's workflow is in the
// workflow's history and, once mirrored, in the follower's store: a phase's
// outputs and failure reason, and every request of its agent (blackboard
// writes, messages, broadcasts, status reports, questions, handoff and
// spawn contexts, what it shows the person). Only the worker knows the
// secrets (its environment, the agents' env, the cuelist's and agents'
// declared names), so the worker masks them, with the local engine's rule
// and code (runner/redact): a secret becomes [redacted:NAME]. What the
// workflow gives an attempt back (its task's inputs, board and handoff
// context, a board read, its inbox, an answer) has its secrets put back from
// this worker's environment, as the local engine puts them back when a run
// continues (redact.Restore): the agent gets the real value, the history
// never holds it.

// maskedLink is an attempt's link to its workflow with the secrets masked
// in what goes in and put back in what comes out.
type maskedLink struct {
	link WorkflowLink
	d    *redact.Redactor
}

// maskLink wraps l; a worker with no secret to mask keeps l as it is.
func maskLink(l WorkflowLink, d *redact.Redactor) WorkflowLink {
	if l == nil || d.None() {
		return l
	}
	return maskedLink{link: l, d: d}
}

func (m maskedLink) Update(ctx context.Context, name string, arg, result any) error {
	if err := m.link.Update(ctx, name, maskedArg(m.d, arg), result); err != nil {
		return err
	}
	restoreResult(m.d, result)
	return nil
}

func (m maskedLink) Query(ctx context.Context, name string, arg, result any) error {
	if err := m.link.Query(ctx, name, maskedArg(m.d, arg), result); err != nil {
		return err
	}
	restoreResult(m.d, result)
	return nil
}

func (m maskedLink) Signal(ctx context.Context, name string, arg any) error {
	return m.link.Signal(ctx, name, maskedArg(m.d, arg))
}

// redactedMark starts every masked secret.
var redactedMark = []byte("[redacted:")

// maskedArg is arg with its secrets masked: arg itself when it has none,
// else a value of its type decoded from its masked JSON (its form in the
// history: Temporal's data converter sends JSON).
func maskedArg(d *redact.Redactor, arg any) any {
	if arg == nil {
		return nil
	}
	raw, err := json.Marshal(arg)
	if err != nil {
		return arg // the data converter refuses it too, saying why
	}
	masked := d.JSON(raw)
	if bytes.Equal(masked, raw) {
		return arg
	}
	v := reflect.New(reflect.TypeOf(arg))
	if json.Unmarshal(masked, v.Interface()) != nil {
		return json.RawMessage(masked) // never the unmasked value
	}
	keepAsker(v.Elem(), reflect.ValueOf(arg))
	return v.Elem().Interface()
}

var askerType = reflect.TypeFor[Asker]()

// keepAsker puts back the Asker a request names (arg's, into its masked
// copy v): its cue, agent and attempt came from the workflow, so they hold
// nothing its history lacks, and the workflow must find the attempt by
// them even when a secret's value is part of an id.
func keepAsker(v, arg reflect.Value) {
	switch {
	case v.Type() == askerType:
		v.Set(arg)
	case v.Kind() == reflect.Struct:
		if f, ok := v.Type().FieldByName("Asker"); ok && f.Type == askerType {
			v.FieldByIndex(f.Index).Set(arg.FieldByIndex(f.Index))
		}
	}
}

// restoreResult puts back the secrets of a masked value the workflow
// answered with (result: a pointer, as the data converter fills it).
func restoreResult(d *redact.Redactor, result any) {
	rv := reflect.ValueOf(result)
	if result == nil || rv.Kind() != reflect.Pointer || rv.IsNil() {
		return
	}
	raw, err := json.Marshal(result)
	if err != nil || !bytes.Contains(raw, redactedMark) {
		return
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return
	}
	restored, err := json.Marshal(d.RestoreValue(v))
	if err != nil {
		return
	}
	fresh := reflect.New(rv.Elem().Type())
	if json.Unmarshal(restored, fresh.Interface()) == nil {
		rv.Elem().Set(fresh.Elem())
	}
}

// maskedResult masks a phase's result before it goes into the history: its
// outputs (which the workflow hands the cues after it, masked: their
// workers put the values back) and its failure's reason. Its output lines
// and protocol messages were masked as they were taken (wirelog.go).
func maskedResult(p *planner.Plan, res *AttemptResult) *AttemptResult {
	d := redactorOf(p)
	if res == nil || d.None() {
		return res
	}
	res.Reason = d.Text(res.Reason)
	out := d.Object(res.Outputs)
	if res.Worktree != nil && out != nil {
		// orch's own: the branch (named after ids the workflow gave) and
		// the commit the workflow fetches and merges by.
		for _, k := range []string{sched.OutputWorktreeBranch, sched.OutputWorktreeCommit} {
			if v, ok := res.Outputs[k]; ok {
				out[k] = v
			}
		}
	}
	res.Outputs = out
	return res
}

// restoredTask is a GO's task with the secrets its recorded values had put
// back from this worker's environment: the inputs (the run's, upstream
// outputs), the blackboard, the handoff context, a fan-out's item.
func restoredTask(p *planner.Plan, t *attempt.Task) *attempt.Task {
	d := redactorOf(p)
	if t == nil || d.None() {
		return t
	}
	c := *t
	c.Inputs = d.Restore(t.Inputs)
	c.Blackboard = d.Restore(t.Blackboard)
	c.HandoffContext = d.Restore(t.HandoffContext)
	if t.BlackboardEntries != nil {
		c.BlackboardEntries = make(map[string]protocols.BoardEntry, len(t.BlackboardEntries))
		for k, e := range t.BlackboardEntries {
			e.Value = d.RestoreValue(e.Value)
			c.BlackboardEntries[d.RestoreText(k)] = e
		}
	}
	if len(t.Item) > 0 && bytes.Contains(t.Item, redactedMark) {
		var v any
		dec := json.NewDecoder(bytes.NewReader(t.Item))
		dec.UseNumber()
		if dec.Decode(&v) == nil {
			if b, err := json.Marshal(d.RestoreValue(v)); err == nil {
				c.Item = b
			}
		}
	}
	return &c
}

// maskedPlanDoc is the plan a worker returns to the workflow (it is in the
// history) with the values of its agents' env and their MCP servers' env
// and headers masked: the workflow never uses them (the workers run the
// agents from their own plan), and a spec that sets a secret's value
// literally must not leak it. The agents are copies: the worker's plan keeps
// the values.
func maskedPlanDoc(p *planner.Plan, doc *PlanDoc) *PlanDoc {
	d := redactorOf(p)
	if d.None() {
		return doc
	}
	for i, a := range doc.Agents {
		c := *a
		c.Env = d.Object(a.Env)
		if a.MCPServers != nil {
			c.MCPServers = make([]spec.MCPServer, len(a.MCPServers))
			for j, s := range a.MCPServers {
				s.Env, s.Headers = d.Object(s.Env), d.Object(s.Headers)
				c.MCPServers[j] = s
			}
		}
		doc.Agents[i] = &c
	}
	return doc
}
