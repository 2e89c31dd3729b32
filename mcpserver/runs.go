package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/orch-cli/orch/control"
	"github.com/orch-cli/orch/internal/toolschema"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

// How long an action waits for a run's owner to take it (as the commands'
// --wait defaults).
const actWait = 10 * time.Second

type statusArgs struct {
	Run string `json:"run,omitempty" jsonschema:"a run id, a unique prefix of one, or last; none: the list of recent runs"`
}

type eventsArgs struct {
	Run   string `json:"run" jsonschema:"a run id, a unique prefix of one, or last"`
	After int64  `json:"after,omitempty" jsonschema:"only events after this sequence number (the last seq seen)"`
}

type logsArgs struct {
	Run  string `json:"run" jsonschema:"a run id, a unique prefix of one, or last"`
	Cue  string `json:"cue,omitempty" jsonschema:"only this cue's output"`
	Tail int    `json:"tail,omitempty" jsonschema:"only the last lines of each cue (none: the first page from the start)"`
}

type answerArgs struct {
	Run      string `json:"run" jsonschema:"the run"`
	Question string `json:"question" jsonschema:"the question's id (q1, q2...), as status and wait give it"`
	Answer   string `json:"answer" jsonschema:"the answer, for the agent that asked"`
}

type goArgs struct {
	Run string `json:"run" jsonschema:"the run"`
	Cue string `json:"cue" jsonschema:"the cue waiting for GO"`
}

type ackArgs struct {
	Run string `json:"run" jsonschema:"the run"`
	ID  string `json:"id" jsonschema:"the escalation's id (e42)"`
}

type stopArgs struct {
	Run string `json:"run" jsonschema:"the run"`
	Cue string `json:"cue,omitempty" jsonschema:"only this cue (and the tasks it handed off); none: the whole run"`
}

type runOnly struct {
	Run string `json:"run" jsonschema:"the run"`
}

type boardGetArgs struct {
	Run string `json:"run" jsonschema:"the run"`
	Key string `json:"key" jsonschema:"the blackboard key"`
}

type boardSetArgs struct {
	Run             string `json:"run" jsonschema:"the run"`
	Key             string `json:"key" jsonschema:"the blackboard key"`
	Value           any    `json:"value" jsonschema:"the new value (any JSON)"`
	ExpectedVersion *int64 `json:"expected_version,omitempty" jsonschema:"write only if the key is at this version (0: only if it is not there yet)"`
}

type waitArgs struct {
	Run            string `json:"run" jsonschema:"the run"`
	Until          string `json:"until,omitempty" jsonschema:"what to wait for: question (one for the person is open), go (a cue waits for GO) or end (the run is over, paused or interrupted); none: the first of them"`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty" jsonschema:"how long to wait at most (default 60); then why is timeout"`
}

func runTools() []tool {
	return []tool{
		define("status", "Run status",
			"A run's status as orch status RUN --output json (state, cues with their attempts, questions, escalations, conflicts, outputs); "+
				"without run, {runs: [...]} the recent runs as orch status --output json lists them.",
			reads, nil, statusTool),
		define("events", "Run events",
			"A run's recorded events after a sequence number, oldest first, at most 1000 ({events, more}); each as orch events --output json prints it. "+
				"Call again with after set to the last seq to read on.",
			reads, nil, eventsTool),
		define("logs", "Agents' output",
			"The output lines of a run's agents ({lines: [{seq, time, cue, agent, attempt, stream, line}], more}), as orch logs --output json; tail: only the last lines of each cue.",
			reads, toolschema.Min("tail", 0), logsTool),
		define("answer", "Answer a question",
			"Answer a question an agent of the run asked the person (orch answer): the agent that asked goes on with it.",
			answers, nil, answerTool),
		define("go", "GO a cue",
			"Give GO to a cue waiting for it (a manual cue, or one that is not idempotent after a resume): orch go. A paused run goes on in the background.",
			acts, nil, goTool),
		define("ack", "Acknowledge an escalation",
			"Acknowledge an escalation of the run (orch ack).",
			answers, nil, ackTool),
		define("stop", "Stop a run or a cue",
			"Stop the whole run, or one cue with the tasks it handed off (orch stop): their agents are killed.",
			stops, nil, stopTool),
		define("retry", "Retry a run",
			"Run a failed, stopped or interrupted run's failed cues again under the same id, keeping what completed (orch retry), in the background.",
			starts, nil, retryTool),
		define("resume", "Resume a run",
			"Continue an interrupted, paused or stopped run (orch resume) in the background: completed cues never run again.",
			starts, nil, resumeTool),
		define("blackboard_get", "Read the blackboard",
			"A blackboard key of the run: {key, value, version, author, at} (orch bb get --output json).",
			reads, nil, boardGetTool),
		define("blackboard_set", "Write the blackboard",
			"Write a new version of a blackboard key ({key, version}); with expected_version, only if the key is at that version.",
			acts, nil, boardSetTool),
		define("wait", "Wait for a run",
			"Block until the run needs the person (a question: answer it; a cue waiting for GO: go) or ends (over, paused or interrupted), "+
				"or timeout_seconds pass, with progress notifications meanwhile. Returns {run, why: question|go|end|timeout, state, inbox}: "+
				"what of the run waits for the person.",
			reads, toolschema.All(toolschema.Enum("until", control.WaitQuestion, control.WaitGo, control.WaitEnd), toolschema.Bounds("timeout_seconds", 1, 3600)), waitTool),
	}
}

// tools are the server's tools. Their input schemas are inferred at first
// use (the first server made), not at package init: every orch command
// links this package and most never serve MCP.
var tools = sync.OnceValue(func() []tool { return append(specTools(), runTools()...) })

func statusTool(ctx context.Context, s *Server, _ *mcp.CallToolRequest, in statusArgs) (any, error) {
	if in.Run == "" {
		runs, err := s.runsJSON(ctx)
		if err != nil {
			return nil, err
		}
		return map[string]json.RawMessage{"runs": runs}, nil
	}
	return s.ctl.Status(ctx, control.StatusRequest{Run: in.Run}) // marshalled once, compact
}

// runsJSON is the recent runs as orch status --output json lists them
// ([] with no database yet).
func (s *Server) runsJSON(ctx context.Context) (json.RawMessage, error) {
	list, err := s.ctl.Runs(ctx, control.RunsRequest{Limit: 20})
	if errors.Is(err, control.ErrNoDatabase) {
		return json.RawMessage("[]"), nil
	}
	if err != nil {
		return nil, err
	}
	if list.Runs == nil {
		list.Runs = []control.RunSummary{}
	}
	return json.Marshal(list.Runs)
}

func eventsTool(ctx context.Context, s *Server, _ *mcp.CallToolRequest, in eventsArgs) (any, error) {
	events, err := s.ctl.Events(ctx, control.EventsRequest{Run: in.Run, After: in.After})
	if err != nil {
		return nil, err
	}
	if events == nil {
		events = []record.Event{}
	}
	return struct {
		Events []record.Event `json:"events"`
		More   bool           `json:"more"`
	}{events, len(events) == control.PageSize}, nil
}

func logsTool(ctx context.Context, s *Server, _ *mcp.CallToolRequest, in logsArgs) (any, error) {
	r, err := s.ctl.Run(ctx, in.Run)
	if err != nil {
		return nil, err
	}
	if in.Cue != "" && !slices.ContainsFunc(r.Cues, func(c store.CueDetail) bool { return c.ID == in.Cue }) {
		return nil, fmt.Errorf("cue: run %s has no cue %q", r.ID, in.Cue)
	}
	req := control.LogsRequest{Run: r.ID, Cue: in.Cue, Tail: in.Tail}
	var lines []control.LogLine
	if in.Tail > 0 {
		lines, _, err = s.ctl.LogsTail(ctx, req)
	} else {
		lines, err = s.ctl.Logs(ctx, req)
	}
	if err != nil {
		return nil, err
	}
	if lines == nil {
		lines = []control.LogLine{}
	}
	return struct {
		Lines []control.LogLine `json:"lines"`
		More  bool              `json:"more"`
	}{lines, in.Tail == 0 && len(lines) == control.PageSize}, nil
}

func answerTool(ctx context.Context, s *Server, _ *mcp.CallToolRequest, in answerArgs) (any, error) {
	return s.ctl.Answer(ctx, control.AnswerRequest{Run: in.Run, Question: in.Question, Text: in.Answer, Wait: actWait})
}

func goTool(ctx context.Context, s *Server, _ *mcp.CallToolRequest, in goArgs) (any, error) {
	return s.ctl.Go(ctx, control.GoRequest{Run: in.Run, Cue: in.Cue, Wait: actWait, Detach: &control.Detach{Log: "mcp"}})
}

func ackTool(ctx context.Context, s *Server, _ *mcp.CallToolRequest, in ackArgs) (any, error) {
	return s.ctl.Ack(ctx, control.AckRequest{Run: in.Run, ID: in.ID})
}

func stopTool(ctx context.Context, s *Server, _ *mcp.CallToolRequest, in stopArgs) (any, error) {
	return s.ctl.Stop(ctx, control.StopRequest{Run: in.Run, Cue: in.Cue, Wait: actWait})
}

func retryTool(ctx context.Context, s *Server, _ *mcp.CallToolRequest, in runOnly) (any, error) {
	return s.ctl.Retry(ctx, control.RetryRequest{Run: in.Run, Detach: &control.Detach{Log: "mcp"}})
}

func resumeTool(ctx context.Context, s *Server, _ *mcp.CallToolRequest, in runOnly) (any, error) {
	return s.ctl.Resume(ctx, control.ResumeRequest{Run: in.Run, Detach: &control.Detach{Log: "mcp"}})
}

func boardGetTool(ctx context.Context, s *Server, _ *mcp.CallToolRequest, in boardGetArgs) (any, error) {
	return s.ctl.BoardGet(ctx, in.Run, in.Key)
}

func boardSetTool(ctx context.Context, s *Server, _ *mcp.CallToolRequest, in boardSetArgs) (any, error) {
	value, err := json.Marshal(in.Value)
	if err != nil {
		return nil, fmt.Errorf("value: %w", err)
	}
	w, err := s.ctl.BoardSet(ctx, control.BoardSetRequest{Run: in.Run, Key: in.Key, Value: value, IfVersion: in.ExpectedVersion})
	if err != nil {
		return nil, err
	}
	return map[string]any{"key": in.Key, "version": w.Version}, nil
}

func waitTool(ctx context.Context, s *Server, req *mcp.CallToolRequest, in waitArgs) (any, error) {
	id, err := s.ctl.Resolve(ctx, in.Run)
	if err != nil {
		return nil, err
	}
	timeout := time.Duration(in.TimeoutSeconds) * time.Second
	if timeout <= 0 {
		timeout = time.Minute
	}
	var until []string
	if in.Until != "" {
		until = []string{in.Until}
	}
	waitCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type outcome struct {
		res *control.WaitResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := s.ctl.Wait(waitCtx, control.WaitRequest{Run: id, For: until, Poll: s.poll})
		done <- outcome{res, err}
	}()
	token := req.Params.GetProgressToken()
	tick := time.NewTicker(s.progress)
	defer tick.Stop()
	for n := 1; ; n++ {
		select {
		case o := <-done:
			if o.err != nil && waitCtx.Err() != nil && ctx.Err() == nil {
				return s.timedOut(ctx, id)
			}
			return o.res, o.err
		case <-tick.C:
			if token != nil {
				state, _ := s.ctl.RunState(ctx, id)
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(n),
					Message: fmt.Sprintf("run %s is %s; still waiting", id, state)})
			}
		}
	}
}

// timedOut is a wait's result when nothing it waited for came in time.
func (s *Server) timedOut(ctx context.Context, id string) (*control.WaitResult, error) {
	state, err := s.ctl.RunState(ctx, id)
	if err != nil {
		return nil, err
	}
	return &control.WaitResult{Run: id, Why: "timeout", State: string(state), Inbox: []control.InboxItem{}}, nil
}
