package temporal

import (
	"context"
	"fmt"
	"sort"

	"go.temporal.io/sdk/workflow"

	"github.com/orch-cli/orch/protocols"
	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/driver"
	"github.com/orch-cli/orch/runner/record"
)

// Memory on Temporal, with the local engine's semantics (across runs, one
// item a key, versions, full-text search): the memory a run may read is
// snapshotted into its input when it is submitted (RunInput.Memory: the
// newest MemorySnapshotMax items of the submitting machine's store); the
// workflow keeps it, with the run's own writes and deletes on top
// (orch.memory-write, an update), and answers orch.memory with it (a
// query), which the worker of an asking agent searches as a store does
// (Activities.SearchMemory). Each write or delete is a note in the run's
// log carrying the item (EventsPage.Memory), which whoever mirrors the run
// (its follower, or orch status catching it up) applies to the store: the
// next run sees it. Items are masked on the worker before they leave it
// (its link, secrets.go), and searches find them masked, as the local
// engine masks what it keeps. Runs started before
// changeMemory refuse memory requests.
const (
	changeMemory      = "orch-memory"
	UpdateMemoryWrite = "orch.memory-write"
	QueryMemory       = "orch.memory"
)

// MemorySnapshotMax bounds the memory a run takes with it (the newest
// items): it is in the workflow's history.
const MemorySnapshotMax = 1000

// MemoryWriteIn is an agent's memory.write (or, Delete, memory.delete).
type MemoryWriteIn struct {
	Asker
	Key    string
	Text   string   `json:",omitempty"`
	Tags   []string `json:",omitempty"`
	Delete bool     `json:",omitempty"`
}

// MemoryChange is a write or delete of memory, for the store (the note
// event of its seq in EventsPage.Memory).
type MemoryChange struct {
	Item   record.MemoryItem
	Delete bool `json:",omitempty"`
}

// memory registers the handlers; the snapshot came with the run's input
// (carried on through continue-as-new, with the run's writes).
func (c *collab) memory() {
	c.mem = map[string]record.MemoryItem{}
	for _, it := range c.w.in.Memory {
		c.mem[it.Key] = it
	}
	_ = workflow.SetUpdateHandlerWithOptions(c.w.ctx, UpdateMemoryWrite, c.memoryWrite, workflow.UpdateHandlerOptions{Validator: func(in MemoryWriteIn) error {
		if in.Key == "" {
			return fmt.Errorf("memory: the key is empty")
		}
		return c.running("memory", in.Asker)
	}})
	_ = workflow.SetQueryHandler(c.w.ctx, QueryMemory, func() ([]record.MemoryItem, error) { return c.memoryNow(), nil })
}

// memoryNow is the run's memory: the snapshot and its writes, by key.
func (c *collab) memoryNow() []record.MemoryItem {
	out := make([]record.MemoryItem, 0, len(c.mem))
	for _, it := range c.mem {
		out = append(out, it)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// memoryWrite keeps (or forgets) an item and records it for the store.
func (c *collab) memoryWrite(ctx workflow.Context, in MemoryWriteIn) (int64, error) {
	w := c.w
	if workflow.GetVersion(ctx, changeMemory, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return 0, fmt.Errorf("this run started on a version of orch that kept no memory on Temporal")
	}
	ev := record.Event{Type: record.EvNote, Cue: in.Cue, Agent: in.Agent, Attempt: in.Attempt}
	var ch MemoryChange
	if in.Delete {
		delete(c.mem, in.Key)
		ch = MemoryChange{Item: record.MemoryItem{Key: in.Key, RunID: w.in.RunID}, Delete: true}
		ev.Reason = fmt.Sprintf("memory.delete %s by %s: forgotten with its history", in.Key, in.Agent)
	} else {
		it := record.MemoryItem{Key: in.Key, Text: in.Text, Tags: in.Tags, Agent: in.Agent, RunID: w.in.RunID, At: workflow.Now(ctx), Version: c.mem[in.Key].Version + 1}
		c.mem[in.Key] = it
		ch = MemoryChange{Item: it}
		ev.Reason = fmt.Sprintf("memory.write %s by %s: version %d", in.Key, in.Agent, it.Version)
	}
	seq := w.emit(ev)
	if w.log.memory == nil {
		w.log.memory = map[int64]MemoryChange{}
	}
	w.log.memory[seq] = ch
	return ch.Item.Version, nil
}

// The worker's side.

// serveMemory answers an agent's memory.write, memory.delete or
// memory.search through its run's workflow; false: msg is none of them.
func (h *stepHost) serveMemory(hub hubLink, peer driver.Peer, msg protocols.Message) (bool, *attempt.Failure) {
	var reply protocols.Body
	var err error
	switch b := msg.Body.(type) {
	case protocols.MemoryWrite:
		_, err = writeMemory(hub, MemoryWriteIn{Key: b.Key, Text: b.Text, Tags: b.Tags})
		reply = protocols.MemoryAck{Key: b.Key}
	case protocols.MemoryDelete:
		_, err = writeMemory(hub, MemoryWriteIn{Key: b.Key, Delete: true})
		reply = protocols.MemoryAck{Key: b.Key}
	case protocols.MemorySearch:
		reply, err = searchMemory(hub, b)
	default:
		return false, nil
	}
	if err != nil {
		return true, peer.Send(protocols.Reply(msg, protocols.ProtocolError{Reason: err.Error()}))
	}
	return true, peer.Send(protocols.Reply(msg, reply))
}

// writeMemory writes through the workflow (the link masks the item's
// secrets, secrets.go).
func writeMemory(hub hubLink, in MemoryWriteIn) (int64, error) {
	if why := hub.denied("memory"); why != "" {
		return 0, fmt.Errorf("memory: %s", why)
	}
	in.Asker = hub.asker
	var version int64
	if err := hub.link.Update(hub.ctx, UpdateMemoryWrite, in, &version); err != nil {
		return 0, fmt.Errorf("memory could not reach the run's workflow: %w", err)
	}
	return version, nil
}

// searchMemory searches the run's memory, as the workflow holds it.
func searchMemory(hub hubLink, b protocols.MemorySearch) (protocols.MemoryResults, error) {
	if why := hub.denied("memory"); why != "" {
		return protocols.MemoryResults{}, fmt.Errorf("memory.search: %s", why)
	}
	if hub.search == nil {
		return protocols.MemoryResults{}, fmt.Errorf("memory.search: this worker cannot search memory")
	}
	var items []record.MemoryItem
	if err := hub.link.Query(hub.ctx, QueryMemory, nil, &items); err != nil {
		return protocols.MemoryResults{}, fmt.Errorf("memory.search could not reach the run's workflow: %w", err)
	}
	// Memory keeps secrets masked, and an agent finds them so, as locally:
	// what the link put back is masked again.
	d := redactorOf(hub.plan)
	for i := range items {
		items[i].Key, items[i].Text = d.Text(items[i].Key), d.Text(items[i].Text)
		for j, t := range items[i].Tags {
			items[i].Tags[j] = d.Text(t)
		}
	}
	found, err := hub.search(hub.ctx, items, b.Query, b.Limit)
	if err != nil {
		return protocols.MemoryResults{}, fmt.Errorf("memory.search failed: %w", err)
	}
	return protocols.MemoryResults{Items: record.MemoryResults(found)}, nil
}

// MemorySearcher searches items as a store searches its memory
// (store.SearchItems: the package does not import the store).
type MemorySearcher func(ctx context.Context, items []record.MemoryItem, query string, limit int) ([]record.MemoryItem, error)
