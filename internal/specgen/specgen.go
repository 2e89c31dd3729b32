// Package specgen writes large, valid, deterministic specs for benchmarks and
// for the `go run ./testdata/gen` tool: a cuelist of N cues with about three
// dependency edges each, a set of agents, and claiming cues.
package specgen

import (
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
)

// Options shape a generated cuelist.
type Options struct {
	Cues         int    // number of cues
	EdgesPerCue  int    // dependencies per cue (fewer for the first cues)
	Agents       int    // agents the cues are spread over
	Claimers     int    // cues that claim one of the resources
	Resources    int    // resources, each with capacity 2
	Command      string // the agents' command (argv joined by spaces)
	Protocol     string // "none" or "jsonl"
	Independent  bool   // no dependencies at all (a flat plan)
	Chain        bool   // each cue depends on the one before (a 1-wide chain)
	MaxParallel  int
	Seed         uint64
	AgentsInline bool // agents in the same file as the cuelist
	OneAtATime   bool // agents serve one cue at a time (concurrency 1): every cue conflicts
	NoProvides   bool // agents promise no outputs (for running commands such as /bin/true)
	// ForEach writes one cue that fans out over Cues items (for_each, its
	// first agent, max_items Cues) instead of Cues cues.
	ForEach bool
}

// Defaults returns the options of the benchmarks: n cues, 3n edges,
// n/10 claiming cues.
func Defaults(n int) Options {
	return Options{Cues: n, EdgesPerCue: 3, Agents: 20, Claimers: n / 10, Resources: 10, Command: "true", Protocol: "none", MaxParallel: 4, Seed: 1, AgentsInline: true}
}

// Agents writes the agent contracts, one document each.
func Agents(w io.Writer, o Options) error {
	var b strings.Builder
	for a := 0; a < o.Agents; a++ {
		argv := strings.Fields(o.Command)
		for i, arg := range argv {
			argv[i] = fmt.Sprintf("%q", arg)
		}
		concurrency := max(o.Cues, 1)
		if o.OneAtATime {
			concurrency = 1
		}
		fmt.Fprintf(&b, "---\nagent:\n  id: agent-%d\n  command: [%s]\n  protocol: %s\n  concurrency: %d\n", a, strings.Join(argv, ", "), o.Protocol, concurrency)
		if !o.NoProvides {
			fmt.Fprintf(&b, "  provides: [out_%d]\n", a)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Cuelist writes the cuelist document.
func Cuelist(w io.Writer, o Options) error {
	rng := rand.New(rand.NewPCG(o.Seed, 42))
	var b strings.Builder
	b.Grow(o.Cues * 90)
	fmt.Fprintf(&b, "---\ncuelist:\n  id: generated-%d\n  max_parallel: %d\n  arbitration: priority\n  resources:\n", o.Cues, max(o.MaxParallel, 1))
	for r := 0; r < max(o.Resources, 1); r++ {
		fmt.Fprintf(&b, "    res-%d: 2\n", r)
	}
	b.WriteString("  cues:\n")
	if o.ForEach {
		fmt.Fprintf(&b, "    - id: FAN\n      agents: [agent-0]\n      for_each:\n        max_items: %d\n        items: [", max(o.Cues, 1))
		for i := 0; i < o.Cues; i++ {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%d", i)
		}
		b.WriteString("]\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	claimEvery := 0
	if o.Claimers > 0 {
		claimEvery = max(o.Cues/o.Claimers, 1)
	}
	for i := 0; i < o.Cues; i++ {
		fmt.Fprintf(&b, "    - id: C%d\n      agents: [agent-%d]\n", i, i%max(o.Agents, 1))
		if deps := dependencies(rng, i, o); len(deps) > 0 {
			b.WriteString("      dependencies: [")
			for j, d := range deps {
				if j > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "C%d", d)
			}
			b.WriteString("]\n")
		}
		if claimEvery > 0 && i%claimEvery == 0 && i/claimEvery < o.Claimers {
			fmt.Fprintf(&b, "      claims: [res-%d]\n", (i/claimEvery)%max(o.Resources, 1))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// dependencies picks up to EdgesPerCue distinct earlier cues, some near and
// some far, so the graph has both depth (about n/20 levels) and width.
func dependencies(rng *rand.Rand, i int, o Options) []int {
	if o.Independent || i == 0 {
		return nil
	}
	if o.Chain {
		return []int{i - 1}
	}
	seen := map[int]bool{}
	var deps []int
	windows := []int{40, 400, 4000}
	for k := 0; len(deps) < min(o.EdgesPerCue, i) && k < 4*o.EdgesPerCue; k++ {
		w := windows[min(k, len(windows)-1)]
		d := i - 1 - rng.IntN(min(w, i))
		if !seen[d] {
			seen[d] = true
			deps = append(deps, d)
		}
	}
	return deps
}

// Spec writes agents and cuelist into one stream.
func Spec(w io.Writer, o Options) error {
	if err := Agents(w, o); err != nil {
		return err
	}
	return Cuelist(w, o)
}
