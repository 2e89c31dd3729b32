package record

import (
	"strconv"
	"time"

	"github.com/orch-cli/orch/runner/sched"
)

// Usage is what an attempt has used so far, as a driver reports it: each
// field is the attempt's total (not an increment). A field left zero keeps
// the total reported before, so a driver may report cost and tokens apart.
type Usage struct {
	CostUSD      float64
	InputTokens  int64
	OutputTokens int64
	Credits      float64
}

// Over is u with the fields it leaves zero taken from before (a report
// over the totals reported before).
func (u Usage) Over(before Usage) Usage {
	if u.CostUSD == 0 {
		u.CostUSD = before.CostUSD
	}
	if u.InputTokens == 0 {
		u.InputTokens = before.InputTokens
	}
	if u.OutputTokens == 0 {
		u.OutputTokens = before.OutputTokens
	}
	if u.Credits == 0 {
		u.Credits = before.Credits
	}
	return u
}

func (u Usage) Minus(v Usage) Usage {
	return Usage{CostUSD: u.CostUSD - v.CostUSD, InputTokens: u.InputTokens - v.InputTokens,
		OutputTokens: u.OutputTokens - v.OutputTokens, Credits: u.Credits - v.Credits}
}

func (u Usage) Plus(v Usage) Usage {
	return Usage{CostUSD: u.CostUSD + v.CostUSD, InputTokens: u.InputTokens + v.InputTokens,
		OutputTokens: u.OutputTokens + v.OutputTokens, Credits: u.Credits + v.Credits}
}

// ExhaustedFor is the record of the limit the run ran out of.
func ExhaustedFor(l *sched.Limit) ExhaustedData {
	switch l.Name {
	case "max_credits":
		return ExhaustedData{Limit: l.Name, Used: strconv.FormatFloat(l.Credits, 'f', -1, 64), Max: strconv.FormatFloat(l.MaxCredits, 'f', -1, 64)}
	case "max_cost_usd":
		return ExhaustedData{Limit: l.Name, Used: FormatUSD(l.CostUSD), Max: FormatUSD(l.MaxCostUSD)}
	}
	return ExhaustedData{Limit: l.Name, Used: l.Used.Round(time.Millisecond).String(), Max: l.Max.String()}
}

// UsageDataOf is the data of an EvUsage event: an attempt's totals so far
// and the run's.
func UsageDataOf(attempt, run Usage) UsageData {
	return UsageData{Credits: attempt.Credits, RunTotal: run.Credits,
		CostUSD: attempt.CostUSD, InputTokens: attempt.InputTokens, OutputTokens: attempt.OutputTokens,
		RunCostUSD: run.CostUSD, RunInputTokens: run.InputTokens, RunOutputTokens: run.OutputTokens}
}
