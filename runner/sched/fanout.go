package sched

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/spec"
)

// A cue with for_each fans out (issue 30): once its dependencies have
// completed and its conditions hold, the core reads the list (the cue's
// own, or an upstream output) and decides the expansion (Expand), recorded
// before any item's GO. Each item is then a cue of the core, placed after
// the plan's: CUE[0], CUE[1]… (CUE[<id>] for an object item with an id),
// with its own phases, attempts, retries, fallbacks, claims and timeout,
// under the run's budgets and the fan-out's own max_parallel. The for_each
// cue itself stays in GO while its items work, and takes no GO slot; it
// completes when every item has, its outputs lists in item order, or fails
// (on_failure: fast, at the first item that did not complete, stopping the
// others; continue, once every item has ended, naming those that failed).

// fanOut is an expanded for_each cue's items and their bounds.
type fanOut struct {
	f        *spec.ForEach
	items    []*cue
	values   []any
	prepared int       // items in WARNING or STANDBY
	inGo     int       // items in GO
	waitWarn *cueQueue // items ready for WARNING beyond max_parallel
	waitGo   *cueQueue // items standing by beyond max_parallel
	done     int       // items completed
	notDone  []*cue    // items that ended otherwise, in the order they ended
	ending   bool      // the cue is ending: its items' ends change nothing
	// allPrepared: no item waits to be prepared any more (each is in GO or
	// over); the cues after the fan-out may get their WARNING.
	allPrepared bool
}

// Item says, for an item's cue pos, what the item is and the name prompts
// give it; ok is false for any other cue.
func (c *Core) Item(pos int) (value any, name string, ok bool) {
	cr := c.cues[pos]
	if cr.parent == nil {
		return nil, "", false
	}
	return cr.parent.fan.values[cr.item], cr.parent.fan.f.Name(), true
}

// Cue is the definition of cue pos: the plan's cue, or an item's (a copy
// of its for_each cue's with the item's id).
func (c *Core) Cue(pos int) *planner.Cue { return c.cues[pos].spec }

// Items lists the item cues' positions of for_each cue pos, in item order
// (none before its expansion).
func (c *Core) Items(pos int) []int {
	f := c.cues[pos].fan
	if f == nil {
		return nil
	}
	out := make([]int, len(f.items))
	for i, it := range f.items {
		out[i] = it.pos
	}
	return out
}

// stepFanOut moves a for_each cue: to its expansion once its dependencies
// completed, its conditions hold and (go: manual) a person said GO; then
// it waits for its items.
func (c *Core) stepFanOut(cr *cue) bool {
	switch {
	case cr.state == Go:
		c.fanCheck(cr)
		return false
	case cr.state != Pending:
		return false
	case cr.fan != nil: // expanded before: a resumed run takes its items up again
		c.setState(cr, Go, fanReason(len(cr.fan.items)))
		return true
	case !c.ready(cr):
		return false // a dependency's change touches it again
	}
	if why, ok := c.conditionFails(cr); !ok {
		return false // the board could not be read: the run ends
	} else if why != "" {
		c.endCue(cr, Skipped, why)
		return false
	}
	if cr.spec.Manual() && !cr.approved {
		c.askForGo(cr)
		return false
	}
	if c.exhausted {
		return false // out of a limit: the loop stops the run
	}
	values, why := c.listOf(cr)
	var ids []string
	if why == "" {
		var err error
		if ids, err = spec.ItemIDs(cr.spec.ID, values); err != nil {
			why = fmt.Sprintf("for_each: %v", err)
		}
	}
	if why != "" {
		c.endCueClass(cr, Failed, why, "contract")
		return false
	}
	c.expand(cr, ids, values, false)
	return true
}

func fanReason(n int) string { return fmt.Sprintf("fan-out: %d item(s)", n) }

// listOf reads a for_each cue's list: its own items, or the upstream
// output from names, a JSON array (or a string holding one, as a key=value
// output is). why says what is wrong with it.
func (c *Core) listOf(cr *cue) (values []any, why string) {
	f := cr.spec.ForEach
	if f.From == "" {
		values = f.Items
	} else {
		id, key, _ := f.Source(c.isCue)
		up := c.byID[id]
		if up == nil || up.state != Completed {
			return nil, fmt.Sprintf("for_each: %s: cue %s has not completed", f.From, id)
		}
		v, ok := up.outputs[key]
		if !ok {
			return nil, fmt.Sprintf("for_each: cue %s has no output %s (its agents did not provide it)", id, key)
		}
		if s, isText := v.(string); isText {
			var list []any
			if json.Unmarshal([]byte(s), &list) == nil && list != nil {
				v = list
			}
		}
		list, isList := v.([]any)
		if !isList {
			return nil, fmt.Sprintf("for_each: %s is %s, not an array", f.From, spec.JSONType(v))
		}
		values = list
	}
	if n := len(values); n > f.Limit() {
		return nil, fmt.Sprintf("for_each: %s has %d items, more than max_items (%d)", listName(f), n, f.Limit())
	}
	return values, ""
}

func listName(f *spec.ForEach) string {
	if f.From != "" {
		return f.From
	}
	return "the list"
}

// expand decides the expansion and adds the items (restored: the record
// already has it, as a resumed run takes it back).
func (c *Core) expand(cr *cue, ids []string, values []any, restored bool) {
	f := cr.spec.ForEach
	cr.fan = &fanOut{f: f, values: values, waitWarn: newCueQueue(0), waitGo: newCueQueue(0)}
	d := Decision{Kind: Expand, Cue: cr.pos, Items: ids, Values: values, Restored: restored}
	if len(ids) == 0 {
		d.Reason = fmt.Sprintf("for_each: %s is empty: %s completes with empty outputs", listName(f), cr.spec.ID)
	}
	c.decide(d)
	for i, id := range ids {
		c.addItem(cr, i, id)
	}
	if restored {
		return
	}
	if len(ids) == 0 {
		c.completeFan(cr)
		return
	}
	c.setState(cr, Go, fanReason(len(ids)))
}

// addItem makes item i of for_each cue p a cue of the core: a copy of p's
// definition under the item's id, without what belongs to p alone (its
// for_each, conditions, manual GO, exports, auto_follow, and the cues
// that wait for it). It keeps p's dependencies, which have completed, so
// that a worktree starts from theirs.
func (c *Core) addItem(p *cue, i int, id string) *cue {
	sc := *p.spec.Cue
	sc.ID, sc.ForEach, sc.Conditions, sc.Go, sc.Exports, sc.AutoFollow = id, nil, nil, "", nil, ""
	sc.Dependencies = slicesClone(p.spec.Dependencies)
	pc := &planner.Cue{Cue: &sc, Index: p.spec.Index, Deps: p.spec.Deps, After: p.spec.After, Wave: p.spec.Wave,
		Estimate: p.spec.Estimate, Remaining: p.spec.Remaining, Critical: p.spec.Critical, Priority: p.spec.Priority}
	it := &cue{pos: len(c.cues), spec: pc, state: Pending, parent: p, item: i, attempts: p.itemAttempts[id]}
	for _, a := range p.spec.Agents {
		it.targets = append(it.targets, target{listed: a, agent: c.plan.Agents[a]})
	}
	c.cues = append(c.cues, it)
	c.byID[id] = it
	p.fan.items = append(p.fan.items, it)
	c.touch(it)
	return it
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }

// fanAdmitsWarning reports whether item cr may go into WARNING under its
// fan-out's max_parallel (as many items prepared as may be in GO);
// otherwise it waits its turn.
func (c *Core) fanAdmitsWarning(cr *cue) bool {
	f := cr.parent.fan
	if max := f.f.MaxParallel; max > 0 && f.prepared >= max {
		f.waitWarn.push(cr.pos)
		return false
	}
	return true
}

// fanAdmitsGo reports whether item cr may go into GO under its fan-out's
// max_parallel.
func (c *Core) fanAdmitsGo(cr *cue) bool {
	f := cr.parent.fan
	if max := f.f.MaxParallel; max > 0 && f.inGo >= max {
		f.waitGo.push(cr.pos)
		return false
	}
	return true
}

// itemLeft counts an item out of the phase it left (from WARNING or
// STANDBY into GO, or from any of them to its end) and wakes the item
// that waited for the slot.
func (c *Core) itemLeft(cr *cue, from State) {
	f := cr.parent.fan
	switch from {
	case Warning, Standby:
		f.prepared--
		c.wakeItem(f.waitWarn)
	case Go:
		f.inGo--
		c.wakeItem(f.waitGo)
	}
}

// wakeItem touches the earliest item of q still waiting: one that ended
// while it waited (orch stop RUN CUE[n]) does not take the slot's turn.
func (c *Core) wakeItem(q *cueQueue) {
	for pos := q.pop(); pos >= 0; pos = q.pop() {
		if !c.cues[pos].state.Final() {
			c.touched.push(pos)
			return
		}
	}
}

// itemEnded counts an item's end; its for_each cue looks at its items
// again.
func (c *Core) itemEnded(cr *cue) {
	p := cr.parent
	if p.fan.ending || p.state.Final() {
		return
	}
	if cr.state == Completed {
		p.fan.done++
	} else {
		p.fan.notDone = append(p.fan.notDone, cr)
	}
	c.touch(p)
	c.fanPrepared(p)
}

// fanPrepared notes the moment no item of fan-out p waits to be prepared
// any more, and wakes the cues after it (see warnsAfter).
func (c *Core) fanPrepared(p *cue) {
	f := p.fan
	if !f.allPrepared && f.inGo+f.done+len(f.notDone) >= len(f.items) {
		f.allPrepared = true
		c.touchNext(p)
	}
}

// fanCheck ends a for_each cue whose items decide it: at the first item
// that did not complete under on_failure: fast (the others are stopped),
// else once every item has ended.
func (c *Core) fanCheck(p *cue) {
	f := p.fan
	if f == nil || p.state.Final() {
		return
	}
	if len(f.notDone) > 0 && f.f.Fast() {
		first := f.notDone[0]
		reason := fmt.Sprintf("item %s %s", first.spec.ID, itemWhy(first))
		c.endFan(p, Failed, reason+" (on_failure: fast: the other items were stopped)",
			fmt.Sprintf("cue %s failed: %s (on_failure: fast)", p.spec.ID, reason))
		return
	}
	if f.done+len(f.notDone) < len(f.items) {
		return
	}
	if len(f.notDone) > 0 {
		c.endFan(p, Failed, failedItems(f), "")
		return
	}
	c.completeFan(p)
}

// itemWhy says how an item that did not complete ended.
func itemWhy(it *cue) string {
	if it.reason == "" {
		return string(it.state)
	}
	return string(it.state) + ": " + it.reason
}

// failedItems names the items that did not complete (on_failure:
// continue), in item order.
func failedItems(f *fanOut) string {
	bad := append([]*cue(nil), f.notDone...)
	sort.Slice(bad, func(i, j int) bool { return bad[i].item < bad[j].item })
	parts := make([]string, 0, min(len(bad), 10))
	for _, it := range bad[:min(len(bad), 10)] {
		parts = append(parts, fmt.Sprintf("%s (%s)", it.spec.ID, itemWhy(it)))
	}
	more := ""
	if len(bad) > 10 {
		more = fmt.Sprintf(" and %d more", len(bad)-10)
	}
	return fmt.Sprintf("%d of %d items did not complete: %s%s", len(bad), len(f.items), strings.Join(parts, "; "), more)
}

// endFan ends a for_each cue in state s: its items still at work are
// stopped first (telling their agents stopWhy; "": that the cue is s).
func (c *Core) endFan(p *cue, s State, reason, stopWhy string) {
	if stopWhy == "" {
		stopWhy = fmt.Sprintf("cue %s is %s", p.spec.ID, s)
	}
	c.stopItems(p, stopWhy)
	c.endCueWhy(p, s, reason, stopWhy)
}

// stopItems ends every item of p not over yet, stopped.
func (c *Core) stopItems(p *cue, why string) {
	if p.fan == nil {
		return
	}
	p.fan.ending = true
	for _, it := range p.fan.items {
		if !it.state.Final() {
			c.endCueWhy(it, Stopped, why, why)
		}
	}
}

// completeFan completes a for_each cue: each output is the list of its
// items' values in item order (null where an item did not provide it),
// for every key its agents provide or an item output.
func (c *Core) completeFan(p *cue) {
	f := p.fan
	keys := map[string]bool{}
	for _, t := range p.targets {
		c.providedBy(t.listed, keys)
	}
	for _, it := range f.items {
		for k := range it.outputs {
			keys[k] = true
		}
	}
	p.outputs = make(map[string]any, len(keys))
	for k := range keys {
		list := make([]any, len(f.items))
		for i, it := range f.items {
			list[i] = it.outputs[k]
		}
		p.outputs[k] = list
	}
	f.ending = true
	c.finishCompleted(p)
}

// providedBy adds what agent id and its fallbacks provide to keys.
func (c *Core) providedBy(id string, keys map[string]bool) {
	a := c.plan.Agents[id]
	if a == nil {
		return
	}
	for _, k := range a.Provides {
		keys[k] = true
	}
	for _, fb := range a.Fallback {
		if f := c.plan.Agents[fb]; f != nil {
			for _, k := range f.Provides {
				keys[k] = true
			}
		}
	}
}

// RecordedItem is one item of a for_each cue's recorded expansion, with
// where the run left it.
type RecordedItem struct {
	ID    string
	Value any
	Rec   Recorded
}

// restoreFanOut takes a for_each cue back: kept when over; else expanded
// again from its recorded list (none: it expands when it can), each item
// restored as a cue is (see Restore), and back in GO.
func (c *Core) restoreFanOut(cr *cue, rec Recorded) {
	cr.attempts, cr.approved = rec.Attempts, rec.Approved
	switch rec.State {
	case Completed, Skipped, Failed, Blocked:
		cr.state, cr.reason, cr.outputs = rec.State, rec.Reason, rec.Outputs
		if len(rec.Outputs) > 0 {
			c.withOutputs.Add(cr.spec)
		}
		for _, it := range rec.Items {
			cr.itemIDs = append(cr.itemIDs, it.ID)
		}
		return
	}
	if rec.Items == nil {
		cr.itemAttempts = rec.ItemAttempts
		if rec.State != Pending {
			c.setState(cr, Pending, "its run's owner stopped; it starts over")
		}
		return
	}
	ids := make([]string, len(rec.Items))
	values := make([]any, len(rec.Items))
	for i, it := range rec.Items {
		ids[i], values[i] = it.ID, it.Value
	}
	c.expand(cr, ids, values, true)
	for i, it := range rec.Items {
		item := cr.fan.items[i]
		c.restoreCue(item, it.Rec)
		switch {
		case item.state == Completed:
			cr.fan.done++
		case item.state.Final():
			cr.fan.notDone = append(cr.fan.notDone, item)
		}
	}
	if rec.State == Go {
		cr.state, cr.reason = Go, rec.Reason
		c.live[cr] = true
	} else {
		c.setState(cr, Go, fanReason(len(ids)))
	}
	c.fanPrepared(cr) // every item over, or none restored to run again
}
