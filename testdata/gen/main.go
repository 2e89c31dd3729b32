// Command gen writes a large generated spec for benchmarks:
//
//	go run ./testdata/gen -cues 10000 > /tmp/big.yaml
//	orch validate /tmp/big.yaml
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"

	"github.com/orch-cli/orch/internal/specgen"
)

func main() {
	o := specgen.Defaults(1000)
	flag.IntVar(&o.Cues, "cues", o.Cues, "number of cues")
	flag.IntVar(&o.EdgesPerCue, "edges", o.EdgesPerCue, "dependencies per cue")
	flag.IntVar(&o.Agents, "agents", o.Agents, "number of agents")
	flag.IntVar(&o.Claimers, "claimers", -1, "cues that claim a resource (default cues/10)")
	flag.StringVar(&o.Command, "command", o.Command, "the agents' command")
	flag.StringVar(&o.Protocol, "protocol", o.Protocol, "none or jsonl")
	flag.BoolVar(&o.Independent, "independent", false, "no dependencies")
	flag.BoolVar(&o.Chain, "chain", false, "each cue depends on the one before")
	flag.BoolVar(&o.NoProvides, "no-provides", false, "agents promise no outputs (for commands such as /bin/true)")
	flag.BoolVar(&o.OneAtATime, "one-at-a-time", false, "agents serve one cue at a time (every cue on an agent conflicts)")
	flag.IntVar(&o.MaxParallel, "max-parallel", o.MaxParallel, "max_parallel of the cuelist")
	flag.BoolVar(&o.ForEach, "for-each", false, "one cue fanning out over -cues items (for_each) instead of -cues cues")
	flag.Parse()
	if o.Claimers < 0 {
		o.Claimers = o.Cues / 10
	}
	w := bufio.NewWriter(os.Stdout)
	if err := specgen.Spec(w, o); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
