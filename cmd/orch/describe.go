package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/orch-cli/orch/control"
	"github.com/orch-cli/orch/runner/record"
)

// describeEvent is the one-line text of an event, as `orch run` prints it
// when not on a terminal and `orch events` prints it. Data that could not be
// decoded is shown as stored, with why.
func describeEvent(e record.Event) string {
	with := func(s string) string {
		if e.Reason != "" {
			return s + ": " + e.Reason
		}
		return s
	}
	if raw, ok := e.Data.(record.RawData); ok {
		head := strings.Join(strings.Fields(e.Type+" "+e.Cue+" "+e.Agent+" "+e.State), " ")
		return fmt.Sprintf("%s %s (its data cannot be read: %v)", with(head), raw.JSON, raw.Err)
	}
	switch e.Type {
	case record.EvRunStarted:
		d, _ := e.Data.(record.RunStartedData) // nil data: the zero value
		return fmt.Sprintf("run %s started: cuelist %s, %s", e.RunID, d.Cuelist, countOf(len(d.Cues), "cue"))
	case record.EvRunState:
		return with("run " + e.State)
	case record.EvCueState:
		if d, _ := e.Data.(record.CueStateData); d.Class != "" { // a failure no attempt had (a fan-out's list)
			return with(fmt.Sprintf("%s %s (%s)", e.Cue, e.State, d.Class))
		}
		return with(e.Cue + " " + e.State)
	case record.EvAttemptStarted:
		d, _ := e.Data.(record.AttemptStartedData) // nil data: the zero value
		s := fmt.Sprintf("%s attempt %d: %s", e.Cue, e.Attempt, e.Agent)
		if d.Fallback {
			s += " (fallback)"
		}
		return s
	case record.EvAttemptEnded:
		d, _ := e.Data.(record.AttemptEndedData) // nil data: the zero value
		s := fmt.Sprintf("%s attempt %d: %s %s", e.Cue, e.Attempt, e.Agent, e.State)
		if d.Class != "" && e.State == string(record.AttemptFailed) {
			s += " (" + d.Class + ")"
		}
		return with(s)
	case record.EvMessage:
		d, _ := e.Data.(record.MessageData) // nil data: the zero value
		arrow := "->"
		if d.Direction == "in" {
			arrow = "<-"
		}
		return fmt.Sprintf("%s %s %s %s", e.Cue, e.Agent, arrow, d.Type)
	case record.EvCooldown:
		d, _ := e.Data.(record.CooldownData) // nil data: the zero value
		if d.Cleared {
			return with(e.Agent + " cooldown cleared")
		}
		return with(fmt.Sprintf("%s cooling down until %s", e.Agent, d.Until.Local().Format(time.TimeOnly)))
	case record.EvBlackboard:
		d, _ := e.Data.(record.BlackboardData) // nil data: the zero value
		return fmt.Sprintf("blackboard %s = version %d by %s", d.Key, d.Version, e.Agent)
	case record.EvBlackboardConflict:
		d, _ := e.Data.(record.BlackboardConflictData) // nil data: the zero value
		return fmt.Sprintf("blackboard %s not written by %s: expected version %d, it is at %d (by %s)",
			d.Key, e.Agent, d.ExpectedVersion, d.CurrentVersion, cmp.Or(d.Author, "nobody"))
	case record.EvManualGo:
		return with(e.Cue + " GO approved")
	case record.EvEscalationAcked:
		d, _ := e.Data.(record.EscalationAckedData) // nil data: the zero value
		return fmt.Sprintf("escalation %s from %s (%s) acknowledged by %s", d.ID, e.Agent, e.Cue, cmp.Or(d.By, "the person"))
	case record.EvNote:
		who := strings.TrimSpace(e.Cue + " " + e.Agent)
		return strings.TrimSpace(who + ": " + e.Reason)
	case record.EvFanOut:
		d, _ := e.Data.(record.FanOutData) // nil data: the zero value
		ids := make([]string, len(d.Items))
		for i, it := range d.Items {
			ids[i] = it.ID
		}
		if len(ids) == 0 {
			return e.Cue + " fans out into no items"
		}
		return fmt.Sprintf("%s fans out into %d item(s): %s", e.Cue, len(ids), control.ShortList(ids, 5))
	case record.EvTaskStarted:
		d, _ := e.Data.(record.TaskStartedData) // nil data: the zero value
		verb := "handed off to"
		if d.Kind == "spawn" {
			verb = "spawned:"
		}
		return fmt.Sprintf("%s %s %s (child of %s, depth %d: %s)", e.Cue, verb, e.Agent, d.Parent, d.Depth, strings.Join(d.Chain, " -> "))
	case record.EvQuestion:
		d, _ := e.Data.(record.QuestionData) // nil data: the zero value
		s := fmt.Sprintf("? %s [%s] %s (%s) asks %s: %s", d.ID, d.Complexity, e.Agent, e.Cue, d.To, oneLine(d.Question, 200))
		if d.To == "person" {
			s += fmt.Sprintf(" — answer with: orch answer %s %s TEXT", e.RunID, d.ID)
		}
		return s
	case record.EvQuestionClosed:
		d, _ := e.Data.(record.AnswerData) // nil data: the zero value
		if e.State == record.QuestionAnswered {
			return fmt.Sprintf("%s answered by %s: %s", d.ID, d.By, oneLine(d.Answer, 200))
		}
		return with(d.ID + " " + e.State)
	case record.EvUsage:
		d, _ := e.Data.(record.UsageData) // nil data: the zero value
		if d.CostUSD > 0 || d.InputTokens > 0 || d.OutputTokens > 0 {
			return fmt.Sprintf("%s %s used %s (run total %s)", e.Cue, e.Agent,
				usedAndCredits(record.Usage{CostUSD: d.CostUSD, InputTokens: d.InputTokens, OutputTokens: d.OutputTokens, Credits: d.Credits}),
				usedAndCredits(record.Usage{CostUSD: d.RunCostUSD, InputTokens: d.RunInputTokens, OutputTokens: d.RunOutputTokens, Credits: d.RunTotal}))
		}
		return fmt.Sprintf("%s %s used %g credits (run total %g)", e.Cue, e.Agent, d.Credits, d.RunTotal)
	case record.EvWorktree:
		d, _ := e.Data.(record.WorktreeData) // nil data: the zero value
		if d.Commit != "" {
			return fmt.Sprintf("%s attempt %d: %s committed on %s (%s)", e.Cue, e.Attempt, e.Agent, d.Branch, shortSHA(d.Commit))
		}
		from := "HEAD"
		switch {
		case strings.HasPrefix(d.From, "merge of "):
			from = "the " + d.From
		case d.From != "":
			from = d.From + "'s branch"
		}
		return fmt.Sprintf("%s attempt %d: %s works in a worktree on %s, from %s (%s)", e.Cue, e.Attempt, e.Agent, d.Branch, from, shortSHA(d.Base))
	case record.EvMerge:
		return describeMerge(e)
	case record.EvNotice:
		d, _ := e.Data.(record.NoticeData) // nil data: the zero value
		what := strings.TrimSpace("notice " + d.Kind)
		if e.State == "failed" {
			return fmt.Sprintf("%s not sent to %s (%s): %s", what, d.To, tries(d.Tries), e.Reason)
		}
		return fmt.Sprintf("%s sent to %s (%s)", what, d.To, tries(d.Tries))
	case record.EvAgentStatus:
		d, _ := e.Data.(record.StatusData) // nil data: the zero value
		return fmt.Sprintf("%s %s reports: %s", e.Cue, e.Agent, statusText(e.State, d.Progress, d.Detail))
	case record.EvExhausted:
		return "limit reached: " + e.Reason
	case record.EvGuard:
		return strings.TrimSpace(e.Cue+" guard: ") + " " + e.Reason
	case record.EvUserMessage:
		d, _ := e.Data.(record.UserMessageData) // nil data: the zero value
		body := oneLine(bodyText(d.Body), 300)
		switch d.Kind {
		case "notice":
			what, said := "a message", ": "+body
			if d.Private {
				what, said = "a private message", ""
			}
			if d.Routed { // between tasks of different cues: their common ancestor is the person
				return fmt.Sprintf("%s (%s) sent %s (%s) %s, routed through you%s", d.From, d.FromTask, d.To, d.ToTask, what, said)
			}
			return fmt.Sprintf("%s sent %s %s%s", d.From, d.To, what, said)
		case "broadcast":
			to := d.To
			if to == "" {
				to = "nobody (no other agent is at work)"
			}
			return fmt.Sprintf("%s (%s) broadcast to %s: %s", d.From, e.Cue, to, body)
		case "escalation":
			var r struct {
				Severity string `json:"severity"`
				Error    string `json:"error"`
			}
			_ = json.Unmarshal(d.Body, &r)
			return fmt.Sprintf("ESCALATION [%s] from %s (%s): %s", r.Severity, d.From, e.Cue, oneLine(r.Error, 300))
		case "notify-mode":
			var r struct {
				Mode, Subtree string
			}
			_ = json.Unmarshal(d.Body, &r)
			return fmt.Sprintf("%s (%s) set the notification mode of its children to %s", d.From, e.Cue, r.Mode)
		case "discovery":
			var r struct {
				Summary string `json:"summary"`
			}
			if json.Unmarshal(d.Body, &r) == nil && r.Summary != "" {
				body = oneLine(r.Summary, 300)
			}
			return fmt.Sprintf("%s (%s) discovered: %s", d.From, e.Cue, body)
		}
		return fmt.Sprintf("message from %s (%s): %s", d.From, e.Cue, body)
	}
	return with(strings.TrimSpace(e.Type + " " + e.Cue + " " + e.Agent))
}

// shortDuration prints d rounded for people: 850ms, 4.2s, 3m05s, 1h02m.
func shortDuration(d time.Duration) string {
	switch {
	case d < 0:
		return "-"
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// bodyText shows a message body: a JSON string as its text, anything else
// as JSON.
func bodyText(raw json.RawMessage) string {
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return text
	}
	return string(raw)
}

func tries(n int) string {
	if n == 1 {
		return "1 try"
	}
	return fmt.Sprintf("%d tries", n)
}

// statusText is a reported state: "blocked 40% (waiting for the db)".
func statusText(state string, progress float64, detail string) string {
	s := state
	if progress > 0 {
		s += fmt.Sprintf(" %.0f%%", progress*100)
	}
	if detail != "" {
		s += " (" + oneLine(detail, 120) + ")"
	}
	return s
}

// escalationSeverity is the severity of an escalation shown to the person
// ("" for any other message).
func escalationSeverity(d record.UserMessageData) string {
	if d.Kind != "escalation" {
		return ""
	}
	var r struct {
		Severity string `json:"severity"`
	}
	_ = json.Unmarshal(d.Body, &r)
	return r.Severity
}
