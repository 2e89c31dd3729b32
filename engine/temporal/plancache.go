package temporal

import (
	"crypto/sha256"
	"fmt"
	"sync"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"

	"github.com/orch-cli/orch/planner"
)

// A workflow builds its plan in workflow code, from the PlanDoc a worker
// returned (loadPlan), and does it again at every replay: each query of a
// finished run (orch status's sync), each miss of the worker's sticky
// cache, each execution after continue-as-new. A 20,000-cue chain takes
// about half a second to plan on a quiet machine, so a loaded worker (or a
// larger cuelist) overran the SDK's deadlock detector (1 s without a
// yield) and no replay of that run could succeed. So a worker keeps the
// plans its workflows built.
//
// The key is the digest of the PlanDoc's payload as the history holds it
// (taken undecoded, as a converter.RawValue): that is all BuildPlan reads, so one key is one plan, whatever made the
// worker return it (the spec hash, the worker's root, which secrets were
// masked). planner.Plan is never changed after Build; nothing in the
// workflow or the scheduler core writes to it or its cues (a fan-out item
// is a copy of its cue), so workflows may share one.

// How many plans a worker keeps: a few cuelists at a time, and of large
// ones fewer (a 20,000-cue chain's plan, without its graph, holds about 16 MB): past
// planCacheCues cues in all, only the most recently used plan is sure to
// stay.
const (
	planCacheSize = 4
	planCacheCues = 50_000
)

// plans are this process's workflows' plans.
var plans = newPlanCache()

func newPlanCache() *planCache { return &planCache{max: planCacheSize, maxCues: planCacheCues} }

// planCache is a few built plans, most recently used first; safe for
// concurrent use. It holds the workflows' plans (plans) and each worker's
// compiled cuelists (Activities.plan), under keys of their own.
type planCache struct {
	mu      sync.Mutex
	max     int // plans
	maxCues int // cues of all its plans, but for the first
	cues    int
	entries []cachedPlan
	built   int // plans built, not found (tests read it)
}

type cachedPlan struct {
	key  [sha256.Size]byte
	plan *planner.Plan
}

// plan returns the plan of a PlanDoc payload, built once. It is not built
// under the lock: another workflow's lookup must not wait half a second
// for it (its own deadlock detector runs meanwhile). Two workflows that
// miss at once both build it; the plans are equal and the first one kept.
func (c *planCache) plan(payload *commonpb.Payload) (*planner.Plan, error) {
	key := payloadKey(payload)
	if p := c.find(key); p != nil {
		return p, nil
	}
	var doc PlanDoc // none (no payload): BuildPlan says so
	if payload != nil {
		// As the SDK decodes a result for a workflow: orch sets no data
		// converter of its own.
		if err := converter.GetDefaultDataConverter().FromPayload(payload, &doc); err != nil {
			return nil, fmt.Errorf("reading the cuelist the worker returned: %w", err)
		}
	}
	p, err := BuildPlan(doc)
	if err != nil {
		return nil, err
	}
	return c.add(key, p), nil
}

// payloadKey is the digest of a payload's encoding and data.
func payloadKey(payload *commonpb.Payload) [sha256.Size]byte {
	h := sha256.New()
	h.Write(payload.GetMetadata()[converter.MetadataEncoding])
	h.Write([]byte{0})
	h.Write(payload.GetData())
	var key [sha256.Size]byte
	h.Sum(key[:0])
	return key
}

func (c *planCache) find(key [sha256.Size]byte) *planner.Plan {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, e := range c.entries {
		if e.key == key {
			copy(c.entries[1:i+1], c.entries[:i])
			c.entries[0] = e
			return e.plan
		}
	}
	return nil
}

// add keeps p under key, dropping the least recently used plans past max
// or maxCues, and returns the plan kept for key.
func (c *planCache) add(key [sha256.Size]byte, p *planner.Plan) *planner.Plan {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.built++
	for _, e := range c.entries {
		if e.key == key { // built meanwhile by another workflow
			return e.plan
		}
	}
	c.entries = append(c.entries, cachedPlan{})
	copy(c.entries[1:], c.entries)
	c.entries[0] = cachedPlan{key: key, plan: p}
	c.cues += len(p.Cues)
	for n := len(c.entries); n > 1 && (n > c.max || c.cues > c.maxCues); n-- {
		c.cues -= len(c.entries[n-1].plan.Cues)
		c.entries[n-1] = cachedPlan{}
		c.entries = c.entries[:n-1]
	}
	return p
}
