package runner

import (
	"fmt"
	"strings"
)

// cliUsage is what a coding CLI reports it spent on one attempt: its cost
// in USD (Claude Code's total_cost_usd; codex reports none) and tokens.
type cliUsage struct {
	CostUSD      float64
	HasCost      bool
	InputTokens  int64
	OutputTokens int64
}

// addUsage records an attempt's usage as a note on it. It is the smallest
// host method for it: counting cost toward the run's limits is for the
// run's cost accounting to take over.
func (a *attempt) addUsage(u cliUsage) {
	var parts []string
	if u.HasCost {
		parts = append(parts, fmt.Sprintf("cost $%.4f", u.CostUSD))
	}
	parts = append(parts, fmt.Sprintf("%d input tokens", u.InputTokens), fmt.Sprintf("%d output tokens", u.OutputTokens))
	a.note("usage: %s", strings.Join(parts, ", "))
}
