// Package scriptagent is a protocol: jsonl agent for orch's own tests of
// collaboration: at GO it runs the script found in its task — the input
// "script", or the handoff_context's — one step after another, through the
// protocols/agent library, and returns what each step saw as its outputs.
// A test writes the scenario in the cuelist (a cue's inputs) or in the
// handoff context or spawn inputs a parent sends, and checks the outputs and
// the run's records.
//
//	script-agent
//
// A step is an object with one key:
//
//	{"bb_write": {"key": K, "value": V}}      blackboard.write
//	{"bb_read": K}                            -> outputs["read_K"]
//	{"await_key": K}                          reads K every 20 ms until it is set (up to 30 s;
//	                                          the same read repeated: raise the loop guardrails)
//	{"handoff": {"to": A, "task_id": T, "context": {...}}}  -> outputs["handoff_A"] = {status, reason, outputs}
//	{"spawn": {"agent": A, "inputs": {...}}}  -> outputs["spawned"] += task id, or outputs["spawn_error"]
//	{"await_announcements": N}                -> outputs["announced"] = [{task_id, agent, status, outputs}]
//	{"ask": {"question": Q, "complexity": C}} -> outputs["answer"], or outputs["ask_error"]
//	{"answer_questions": TEXT}                answers every question from its children with TEXT
//	{"pass_up_questions": true}               passes every question from its children up
//	{"send": {"to": A, "body": B, "private": P}}  -> outputs["sent_A"] = "ok" or the error
//	{"await_messages": N}                     -> outputs["received"] = [{from, body}]
//	{"await_notices": N}                      -> outputs["notices"] = [{kind, from, from_task, to_task, routed, private, body}]
//	{"user": B}, {"discovery": S}, {"usage": CREDITS}, {"status": S}
//	{"cost": {"cost_usd": X, "input_tokens": N, "output_tokens": M}}  a status.usage with cost and tokens
//	{"memory_write": {"key": K, "text": T, "tags": [...]}}
//	{"memory_search": Q}                      -> outputs["memory"] = [keys], outputs["memory_versions"] = ["K vN by AUTHOR"]
//	{"repeat": {"times": N, "step": STEP}}    the step N times
//	{"try": STEP}                             the step; an error from it is added to outputs["errors"]
//	                                          (loop_blocked ones counted in outputs["loop_blocked"]) and the script goes on
//	{"flood": N}                              N message.user as fast as it can
//	{"sleep": DURATION}
//	{"pidfile": PATH}                         writes the agent's pid to PATH
//	{"output": {K: V}}                        -> outputs[K] = V
//	{"echo_task": K}                          -> outputs[K] = {task_id, parent_task_id, depth, inputs}
//	                                          (the GO task as received; inputs without "script")
//	{"fail": REASON}                          the task fails with REASON
//	{"list_agents": true}                     -> outputs["agents"] = ["TASK agent state", ...], or outputs["agents_error"]
//	{"broadcast": B}                          -> outputs["broadcast_to"] = [task ids]
//	{"await_broadcasts": N}                   -> outputs["broadcasts"] = [{from, body}]
//	{"report_status": {"state": S, "progress": P, "detail": D}}  status.report (and the answer to status.request)
//	{"escalate": {"severity": S, "error": E}} escalation.error with a severity
//	{"notify_mode": MODE}                     notify.mode for its children
//
// and those of board.go (fenced writes, watches, memory.delete).
package scriptagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/protocols/agent"
)

// Main runs the agent until orch closes its stdin; it returns the exit status.
func Main([]string) int {
	agent.Run(handle)
	return 0
}

type step map[string]json.RawMessage

type state struct {
	t       *agent.Task
	outputs map[string]any
}

func handle(ctx context.Context, t *agent.Task) (map[string]any, error) {
	raw, ok := t.Inputs["script"]
	if !ok {
		raw = t.HandoffContext["script"]
	}
	b, _ := json.Marshal(raw)
	var script []step
	if err := json.Unmarshal(b, &script); err != nil {
		return nil, fmt.Errorf("the task's script is not a list of steps: %v", err)
	}
	s := &state{t: t, outputs: map[string]any{}}
	for i, st := range script {
		if err := s.do(ctx, st); err != nil {
			return nil, fmt.Errorf("step %d: %w", i+1, err)
		}
	}
	return s.outputs, nil
}

func (s *state) do(ctx context.Context, st step) error {
	if len(st) != 1 {
		return fmt.Errorf("a step has one key, not %d", len(st))
	}
	for op, arg := range st {
		return s.op(ctx, op, arg)
	}
	return nil
}

func (s *state) op(ctx context.Context, op string, arg json.RawMessage) error {
	t := s.t
	switch op {
	case "bb_write":
		var a struct {
			Key   string `json:"key"`
			Value any    `json:"value"`
		}
		if err := json.Unmarshal(arg, &a); err != nil {
			return err
		}
		_, err := t.BlackboardWrite(ctx, a.Key, a.Value)
		return err
	case "bb_read":
		var key string
		_ = json.Unmarshal(arg, &key)
		v, found, _, _, err := t.BlackboardRead(ctx, key)
		if err != nil {
			return err
		}
		if found {
			s.outputs["read_"+key] = v
		}
	case "await_key":
		var key string
		_ = json.Unmarshal(arg, &key)
		for deadline := time.Now().Add(30 * time.Second); ; {
			_, found, _, _, err := t.BlackboardRead(ctx, key)
			if err != nil || found {
				return err
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("blackboard key %q not set within 30s", key)
			}
			select {
			case <-time.After(20 * time.Millisecond):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	case "handoff":
		var a struct {
			To      string         `json:"to"`
			TaskID  string         `json:"task_id"`
			Context map[string]any `json:"context"`
		}
		if err := json.Unmarshal(arg, &a); err != nil {
			return err
		}
		res, err := t.Handoff(ctx, a.To, a.TaskID, a.Context)
		if err != nil {
			return err
		}
		s.outputs["handoff_"+a.To] = map[string]any{"status": res.Status, "reason": res.Reason, "outputs": res.Outputs}
	case "spawn":
		var a struct {
			Agent  string         `json:"agent"`
			Inputs map[string]any `json:"inputs"`
		}
		if err := json.Unmarshal(arg, &a); err != nil {
			return err
		}
		id, err := t.Spawn(ctx, a.Agent, a.Inputs)
		if err != nil {
			s.outputs["spawn_error"] = err.Error()
			return nil
		}
		ids, _ := s.outputs["spawned"].([]any)
		s.outputs["spawned"] = append(ids, id)
	case "await_announcements":
		var n int
		_ = json.Unmarshal(arg, &n)
		var got []any
		for len(got) < n {
			select {
			case a := <-t.Announcements():
				got = append(got, map[string]any{"task_id": a.TaskID, "agent": a.Agent, "status": a.Status, "outputs": a.Outputs, "reason": a.Reason})
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		s.outputs["announced"] = got
	case "ask":
		var a struct {
			Question   string `json:"question"`
			Complexity string `json:"complexity"`
		}
		if err := json.Unmarshal(arg, &a); err != nil {
			return err
		}
		answer, err := t.Ask(ctx, a.Question, a.Complexity)
		if err != nil {
			s.outputs["ask_error"] = err.Error()
			return nil
		}
		s.outputs["answer"] = answer
	case "answer_questions", "pass_up_questions":
		var text string
		_ = json.Unmarshal(arg, &text)
		go func() {
			for {
				select {
				case q := <-t.Questions():
					if op == "pass_up_questions" {
						_ = q.PassUp(ctx)
					} else {
						_ = q.Answer(ctx, text)
					}
				case <-ctx.Done():
					return
				}
			}
		}()
	case "send":
		var a struct {
			To      string `json:"to"`
			Body    any    `json:"body"`
			Private bool   `json:"private"`
		}
		if err := json.Unmarshal(arg, &a); err != nil {
			return err
		}
		s.outputs["sent_"+a.To] = "ok"
		send := t.Send
		if a.Private {
			send = t.SendPrivate
		}
		if err := send(ctx, a.To, a.Body); err != nil {
			s.outputs["sent_"+a.To] = err.Error()
		}
	case "await_messages":
		var n int
		_ = json.Unmarshal(arg, &n)
		var got []any
		for len(got) < n {
			select {
			case m := <-t.Messages():
				got = append(got, map[string]any{"from": m.From, "body": m.Body})
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		s.outputs["received"] = got
	case "await_notices":
		var n int
		_ = json.Unmarshal(arg, &n)
		got := []any{}
		for len(got) < n {
			select {
			case m := <-t.Notices():
				got = append(got, map[string]any{"kind": m.Kind, "from": m.From, "from_task": m.FromTask, "to_task": m.ToTask,
					"routed": m.Routed, "private": m.Private, "body": m.Body})
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		s.outputs["notices"] = got
	case "user":
		var body any
		_ = json.Unmarshal(arg, &body)
		return t.User(ctx, body)
	case "discovery":
		var summary string
		_ = json.Unmarshal(arg, &summary)
		return t.Discovery(ctx, summary)
	case "usage":
		var credits float64
		_ = json.Unmarshal(arg, &credits)
		return t.Usage(ctx, credits)
	case "cost":
		var u protocols.StatusUsage
		_ = json.Unmarshal(arg, &u)
		return t.ReportUsage(ctx, u)
	case "status":
		var state string
		_ = json.Unmarshal(arg, &state)
		return t.Status(ctx, state, "")
	case "memory_write":
		var a struct {
			Key  string   `json:"key"`
			Text string   `json:"text"`
			Tags []string `json:"tags"`
		}
		if err := json.Unmarshal(arg, &a); err != nil {
			return err
		}
		return t.MemoryWrite(ctx, a.Key, a.Text, a.Tags)
	case "memory_search":
		var q string
		_ = json.Unmarshal(arg, &q)
		items, err := t.MemorySearch(ctx, q)
		if err != nil {
			return err
		}
		keys, versions := []any{}, []any{}
		for _, it := range items {
			keys = append(keys, it["key"])
			versions = append(versions, fmt.Sprintf("%v v%v by %v", it["key"], it["version"], it["author"]))
		}
		s.outputs["memory"] = keys
		s.outputs["memory_versions"] = versions
	case "repeat":
		var a struct {
			Times int  `json:"times"`
			Step  step `json:"step"`
		}
		if err := json.Unmarshal(arg, &a); err != nil {
			return err
		}
		for i := 0; i < a.Times; i++ {
			if err := s.do(ctx, a.Step); err != nil {
				return err
			}
		}
	case "try":
		var inner step
		if err := json.Unmarshal(arg, &inner); err != nil {
			return err
		}
		if err := s.do(ctx, inner); err != nil {
			errs, _ := s.outputs["errors"].([]string)
			s.outputs["errors"] = append(errs, err.Error())
			if agent.LoopBlocked(err) {
				n, _ := s.outputs["loop_blocked"].(int)
				s.outputs["loop_blocked"] = n + 1
			}
		}
	case "flood":
		var n int
		_ = json.Unmarshal(arg, &n)
		for i := 0; i < n; i++ {
			if err := t.User(ctx, map[string]any{"n": i}); err != nil {
				return err
			}
		}
	case "sleep":
		var d string
		_ = json.Unmarshal(arg, &d)
		dur, err := time.ParseDuration(d)
		if err != nil {
			return err
		}
		select {
		case <-time.After(dur):
		case <-ctx.Done():
			return ctx.Err()
		}
	case "output":
		var kv map[string]any
		if err := json.Unmarshal(arg, &kv); err != nil {
			return err
		}
		for k, v := range kv {
			s.outputs[k] = v
		}
	case "echo_task":
		var key string
		_ = json.Unmarshal(arg, &key)
		inputs := map[string]any{}
		for k, v := range t.Inputs {
			if k != "script" {
				inputs[k] = v
			}
		}
		s.outputs[key] = map[string]any{"task_id": t.TaskID, "parent_task_id": t.ParentTaskID, "depth": t.Depth, "inputs": inputs}
	case "pidfile":
		var path string
		_ = json.Unmarshal(arg, &path)
		return os.WriteFile(path, []byte(strconv.Itoa(os.Getpid())), 0o644)
	case "list_agents":
		list, err := t.ListAgents(ctx)
		if err != nil {
			s.outputs["agents_error"] = err.Error()
			return nil
		}
		out := []any{}
		for _, a := range list {
			out = append(out, fmt.Sprintf("%s %s %s handoff=%v", a.TaskID, a.ID, a.State, a.AcceptsHandoff))
		}
		s.outputs["agents"] = out
	case "broadcast":
		var body any
		_ = json.Unmarshal(arg, &body)
		to, err := t.Broadcast(ctx, body)
		if err != nil {
			return err
		}
		s.outputs["broadcast_to"] = to
	case "await_broadcasts":
		var n int
		_ = json.Unmarshal(arg, &n)
		got := []any{}
		for len(got) < n {
			select {
			case b := <-t.Broadcasts():
				got = append(got, map[string]any{"from": b.From, "body": b.Body})
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		s.outputs["broadcasts"] = got
	case "report_status":
		var a struct {
			State    string  `json:"state"`
			Progress float64 `json:"progress"`
			Detail   string  `json:"detail"`
		}
		if err := json.Unmarshal(arg, &a); err != nil {
			return err
		}
		return t.ReportStatus(ctx, a.State, a.Progress, a.Detail)
	case "escalate":
		var a struct {
			Severity string `json:"severity"`
			Error    string `json:"error"`
		}
		if err := json.Unmarshal(arg, &a); err != nil {
			return err
		}
		return t.EscalateWithSeverity(ctx, a.Severity, a.Error, nil)
	case "notify_mode":
		var mode string
		_ = json.Unmarshal(arg, &mode)
		return t.SetNotifyMode(ctx, mode)
	case "fail":
		var reason string
		_ = json.Unmarshal(arg, &reason)
		return errors.New(reason)
	default:
		if ok, err := s.boardOp(ctx, op, arg); ok {
			return err
		}
		fmt.Fprintf(os.Stderr, "script-agent: unknown step %q\n", op)
		return fmt.Errorf("unknown step %q", op)
	}
	return nil
}
