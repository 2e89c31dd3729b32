package main

import (
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// The one place where orch tunes Go's garbage collector, for the whole
// process, by command; a command's own code never does. GOGC or GOMEMLIMIT
// in the environment win over this.
//
//   - A run (orch run, resume, go — which may continue a run) lives long;
//     its heap is small and its garbage mostly short-lived records, so the
//     collector runs a quarter as often (GOGC 400), which saves about a
//     tenth of orch's CPU, left to the agents on the same cores; the soft
//     limit runSoftMemory keeps a big plan's heap from growing with it (the
//     heap may pass it: a run never fails for it, the collector just works
//     harder).
//   - orch validate loads specs and exits: GOGC 400 trades memory for speed
//     (a 10,000-cue spec still peaks near 100 MB), and the soft limit
//     specSoftMemory keeps the biggest spec a load accepts (spec's node
//     limit) under 256 MB; so does orch plan's, with Go's GOGC.
//   - Every other command keeps Go's defaults.
var gcPolicy = map[string]struct {
	percent   int
	softLimit int64 // bytes; 0: none
}{
	"run":      {400, runSoftMemory},
	"resume":   {400, runSoftMemory},
	"go":       {400, runSoftMemory},
	"retry":    {400, runSoftMemory},
	"validate": {400, specSoftMemory},
	"plan":     {100, specSoftMemory},
}

const (
	runSoftMemory  = 64 << 20
	specSoftMemory = 128 << 20
)

// setGCPolicy applies gcPolicy for the command about to run (the root's
// PersistentPreRun).
func setGCPolicy(cmd *cobra.Command) {
	p, ok := gcPolicy[cmd.Name()]
	if !ok || cmd.Parent() == nil || cmd.Parent().Parent() != nil { // top-level commands only (not bb set)
		return
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(p.percent)
	}
	if p.softLimit > 0 && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(p.softLimit)
	}
}
