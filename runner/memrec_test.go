//go:build unix

package runner

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/orch-cli/orch/runner/record"
)

// memRecorder is an in-memory Recorder for tests: the runner never needs
// SQLite to be tested.
type memRecorder struct {
	mu        sync.Mutex
	events    []record.Event
	logs      []record.LogLine
	board     map[string]map[string]record.BlackboardEntry
	cooldowns map[string]time.Time
	commands  []record.Command
	seq       map[string]int64
	memory    map[string]record.MemoryItem
}

func newMemRecorder() *memRecorder {
	return &memRecorder{board: map[string]map[string]record.BlackboardEntry{}, cooldowns: map[string]time.Time{}, seq: map[string]int64{}}
}

func (m *memRecorder) Append(_ context.Context, events ...record.Event) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range events {
		m.seq[events[i].RunID]++
		events[i].Seq = m.seq[events[i].RunID]
		if events[i].Type == record.EvCooldown {
			var d record.CooldownData
			asData(events[i].Data, &d)
			m.cooldowns[events[i].Agent] = d.Until
		}
		m.events = append(m.events, events[i])
	}
	return nil
}

func (m *memRecorder) Log(l record.LogLine) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.logs = append(m.logs, l)
}

func (m *memRecorder) Flush(context.Context) error { return nil }

func (m *memRecorder) BlackboardWrite(_ context.Context, runID, key string, value json.RawMessage, author string) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.board[runID] == nil {
		m.board[runID] = map[string]record.BlackboardEntry{}
	}
	v := m.board[runID][key].Version + 1
	m.board[runID][key] = record.BlackboardEntry{Key: key, Value: value, Version: v, Author: author, At: time.Now()}
	m.seq[runID]++
	m.events = append(m.events, record.Event{RunID: runID, Seq: m.seq[runID], Type: record.EvBlackboard, Agent: author})
	return v, nil
}

func (m *memRecorder) BlackboardRead(_ context.Context, runID, key string) (record.BlackboardEntry, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.board[runID][key]
	return e, ok, nil
}

func (m *memRecorder) Blackboard(_ context.Context, runID string) (map[string]record.BlackboardEntry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]record.BlackboardEntry{}
	for k, v := range m.board[runID] {
		out[k] = v
	}
	return out, nil
}

func (m *memRecorder) CooldownUntil(_ context.Context, agent string) (time.Time, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cooldowns[agent], nil
}

func (m *memRecorder) Commands(_ context.Context, runID string) ([]record.Command, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []record.Command
	for _, c := range m.commands {
		if c.RunID == runID {
			out = append(out, c)
		}
	}
	return out, nil
}

func (m *memRecorder) CommandDone(_ context.Context, id int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, c := range m.commands {
		if c.ID == id {
			m.commands = append(m.commands[:i], m.commands[i+1:]...)
			break
		}
	}
	return nil
}

func (m *memRecorder) LoadRun(context.Context, string) (*record.RunRecord, error) { return nil, nil }

// of returns the events of one type, in order.
func (m *memRecorder) of(typ string) []record.Event {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []record.Event
	for _, e := range m.events {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// cueStates returns the last state recorded for each cue.
func (m *memRecorder) cueStates() map[string]string {
	out := map[string]string{}
	for _, e := range m.of(record.EvCueState) {
		out[e.Cue] = e.State
	}
	return out
}

// asData sets *v to an event's data, which must be of v's type (nil data
// leaves it alone).
func asData(data record.EventData, v any) {
	if data != nil {
		reflect.ValueOf(v).Elem().Set(reflect.ValueOf(data))
	}
}

func (m *memRecorder) Heartbeat(context.Context, string, string) error { return nil }

func (m *memRecorder) BlackboardWriteMany(ctx context.Context, runID string, puts []record.BlackboardPut) ([]record.BlackboardWritten, error) {
	written := make([]record.BlackboardWritten, len(puts))
	for i, p := range puts {
		if cur, _, _ := m.BlackboardRead(ctx, runID, p.Key); p.IfVersion != nil && *p.IfVersion != cur.Version {
			written[i] = record.BlackboardWritten{Version: cur.Version, Author: cur.Author, Conflict: true,
				Event: record.Event{RunID: runID, Type: record.EvBlackboardConflict, Cue: p.Cue, Agent: p.Author, Attempt: p.Attempt,
					Data: record.BlackboardConflictData{Key: p.Key, ExpectedVersion: *p.IfVersion, CurrentVersion: cur.Version, Author: cur.Author, MessageID: p.MessageID}}}
			m.mu.Lock()
			m.events = append(m.events, written[i].Event)
			m.mu.Unlock()
			continue
		}
		v, err := m.BlackboardWrite(ctx, runID, p.Key, p.Value, p.Author)
		if err != nil {
			return written[:i], err
		}
		written[i] = record.BlackboardWritten{Version: v, Author: p.Author, Event: record.Event{RunID: runID, Type: record.EvBlackboard, Cue: p.Cue, Agent: p.Author,
			Attempt: p.Attempt, Data: record.BlackboardData{Key: p.Key, Version: v, MessageID: p.MessageID}}}
	}
	return written, nil
}

// MemoryWrite and MemorySearch keep items in a map; search matches the
// query as a substring of the text (full-text search is the store's).
func (m *memRecorder) MemoryWrite(_ context.Context, item record.MemoryItem) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.memory == nil {
		m.memory = map[string]record.MemoryItem{}
	}
	item.Version = m.memory[item.Key].Version + 1
	m.memory[item.Key] = item
	return nil
}

func (m *memRecorder) MemoryDelete(_ context.Context, _, key string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.memory[key]
	delete(m.memory, key)
	return ok, nil
}

func (m *memRecorder) MemorySearch(_ context.Context, query string, _ int) ([]record.MemoryItem, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []record.MemoryItem
	for _, it := range m.memory {
		if strings.Contains(it.Text, query) {
			out = append(out, it)
		}
	}
	return out, nil
}

// dataJSON is an event's data as the recorder stores it.
func dataJSON(data record.EventData) string {
	b, err := json.Marshal(data)
	if err != nil {
		panic(err)
	}
	return string(b)
}
