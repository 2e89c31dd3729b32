package control

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
)

// cueSpecHashes fingerprints each cue's own definition: its entry in the
// cuelist and the specs of the agents it may run (its agents and their
// fallbacks). What the whole cuelist sets (defaults, inputs) is not part
// of it, nor are the files an agent's command reads.
func cueSpecHashes(p *planner.Plan) map[string]string {
	out := make(map[string]string, len(p.Cues))
	for _, c := range p.Cues {
		h := sha256.New()
		cue, _ := json.Marshal(c.Cue)
		h.Write(cue)
		for _, id := range cueAgents(p, c) {
			a := p.Agents[id]
			if a == nil {
				continue
			}
			spec, _ := json.Marshal(a)
			fmt.Fprintf(h, "\x00%s", spec)
		}
		out[c.ID] = "sha256:" + hex.EncodeToString(h.Sum(nil))
	}
	return out
}

// cueAgents lists the agents a cue may run, sorted: its own, and their
// fallbacks, transitively.
func cueAgents(p *planner.Plan, c *planner.Cue) []string {
	seen := map[string]bool{}
	var walk func(id string)
	walk = func(id string) {
		if seen[id] {
			return
		}
		seen[id] = true
		if a := p.Agents[id]; a != nil {
			for _, fb := range a.Fallback {
				walk(fb)
			}
		}
	}
	for _, id := range c.Agents {
		walk(id)
	}
	ids := make([]string, 0, len(seen))
	for id := range seen {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// cueSpecsEvent records hashes (cueSpecHashes) for run runID; a new run
// records it with its start (runner.Options.StartedWith), with runID "".
func cueSpecsEvent(runID string, hashes map[string]string) record.Event {
	return record.Event{RunID: runID, Type: record.EvCueSpecs, Reason: fmt.Sprintf("the definitions of %d cue(s), as run", len(hashes)),
		Data: record.CueSpecsData{Hashes: hashes}}
}

// recordedCueHashes returns the fingerprint of each cue's definition as it
// last ran; a run recorded by an orch from before them has none (nil).
func recordedCueHashes(ctx context.Context, db *store.DB, runID string) (map[string]string, error) {
	events, err := db.EventsOfType(ctx, runID, record.EvCueSpecs)
	if err != nil {
		return nil, err
	}
	var out map[string]string
	for _, e := range events {
		d, ok := e.Data.(record.CueSpecsData)
		if !ok { // undecodable: as if not recorded
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		for id, h := range d.Hashes {
			out[id] = h
		}
	}
	return out, nil
}
