package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/orch-cli/orch/runner"
)

// describeEvent is the one-line text of an event, as `orch run` prints it
// when not on a terminal and `orch events` prints it.
func describeEvent(e runner.Event) string {
	with := func(s string) string {
		if e.Reason != "" {
			return s + ": " + e.Reason
		}
		return s
	}
	switch e.Type {
	case runner.EvRunStarted:
		var d runner.RunStartedData
		_ = json.Unmarshal(e.Data, &d)
		return fmt.Sprintf("run %s started: cuelist %s, %d cues", e.RunID, d.Cuelist, len(d.Cues))
	case runner.EvRunState:
		return with("run " + e.State)
	case runner.EvCueState:
		return with(e.Cue + " " + e.State)
	case runner.EvAttemptStarted:
		var d runner.AttemptStartedData
		_ = json.Unmarshal(e.Data, &d)
		s := fmt.Sprintf("%s attempt %d: %s", e.Cue, e.Attempt, e.Agent)
		if d.Fallback {
			s += " (fallback)"
		}
		return s
	case runner.EvAttemptEnded:
		var d runner.AttemptEndedData
		_ = json.Unmarshal(e.Data, &d)
		s := fmt.Sprintf("%s attempt %d: %s %s", e.Cue, e.Attempt, e.Agent, e.State)
		if d.Class != "" && e.State == string(runner.AttemptFailed) {
			s += " (" + d.Class + ")"
		}
		return with(s)
	case runner.EvMessage:
		var d runner.MessageData
		_ = json.Unmarshal(e.Data, &d)
		arrow := "->"
		if d.Direction == "in" {
			arrow = "<-"
		}
		return fmt.Sprintf("%s %s %s %s", e.Cue, e.Agent, arrow, d.Type)
	case runner.EvCooldown:
		var d runner.CooldownData
		_ = json.Unmarshal(e.Data, &d)
		return with(fmt.Sprintf("%s cooling down until %s", e.Agent, d.Until.Local().Format(time.TimeOnly)))
	case runner.EvBlackboard:
		var d runner.BlackboardData
		_ = json.Unmarshal(e.Data, &d)
		return fmt.Sprintf("blackboard %s = version %d by %s", d.Key, d.Version, e.Agent)
	case runner.EvManualGo:
		return with(e.Cue + " GO approved")
	case runner.EvNote:
		who := strings.TrimSpace(e.Cue + " " + e.Agent)
		return strings.TrimSpace(who + ": " + e.Reason)
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
