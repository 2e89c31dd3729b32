package temporal

import (
	"encoding/json"

	"github.com/orch-cli/orch/runner/record"
)

// eventLog is the run's event log as the workflow keeps it: orch's own
// events, numbered from FirstSeq, the output lines logged with them and the
// values of the blackboard writes (a blackboard/updated event carries the
// key and version only). The follower reads it with the orch.events query.
type eventLog struct {
	next   int64
	events []record.Event
	logs   []SeqLogs
	values map[int64]json.RawMessage // blackboard/updated seq -> value
	memory map[int64]MemoryChange    // memory's note seq -> the change (memory.go)
	done   bool
	prev   string // the run id of the execution before (continue.go): it has the events before this one's
	run    string // this execution's run id
}

func (l *eventLog) add(ev record.Event) int64 {
	ev.Seq = l.next
	l.next++
	l.events = append(l.events, ev)
	return ev.Seq
}

// addLogs logs lines before the next event.
func (l *eventLog) addLogs(s SeqLogs) {
	if len(s.Lines) == 0 {
		return
	}
	s.Seq = l.next
	l.logs = append(l.logs, s)
}

// page returns up to MaxEventsPerQuery events after afterSeq, with the
// lines logged before them and the blackboard values they wrote.
func (l *eventLog) page(afterSeq int64) (*EventsPage, error) {
	first := l.next - int64(len(l.events))
	if afterSeq+1 < first && l.prev != "" {
		return &EventsPage{Earlier: l.prev, Run: l.run, First: first}, nil
	}
	i := max(afterSeq-first+1, 0)
	if i > int64(len(l.events)) {
		i = int64(len(l.events))
	}
	j := min(i+MaxEventsPerQuery, int64(len(l.events)))
	p := &EventsPage{Events: l.events[i:j], Done: l.done && j == int64(len(l.events)), Run: l.run, First: first}
	if len(p.Events) == 0 {
		return p, nil
	}
	first, last := p.Events[0].Seq, p.Events[len(p.Events)-1].Seq
	for _, s := range l.logs {
		if s.Seq >= first && s.Seq <= last {
			p.Logs = append(p.Logs, s)
		}
	}
	for seq, m := range l.memory {
		if seq >= first && seq <= last {
			if p.Memory == nil {
				p.Memory = map[int64]MemoryChange{}
			}
			p.Memory[seq] = m
		}
	}
	for seq, v := range l.values {
		if seq >= first && seq <= last {
			if p.Values == nil {
				p.Values = map[int64]json.RawMessage{}
			}
			p.Values[seq] = v
		}
	}
	return p, nil
}
