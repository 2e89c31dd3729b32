//go:build unix

package runner

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"time"
)

// memRecorder is an in-memory Recorder for tests: the runner never needs
// SQLite to be tested.
type memRecorder struct {
	mu        sync.Mutex
	events    []Event
	logs      []LogLine
	board     map[string]map[string]BlackboardEntry
	cooldowns map[string]time.Time
	commands  []Command
	seq       map[string]int64
	memory    map[string]MemoryItem
}

func newMemRecorder() *memRecorder {
	return &memRecorder{board: map[string]map[string]BlackboardEntry{}, cooldowns: map[string]time.Time{}, seq: map[string]int64{}}
}

func (m *memRecorder) Append(_ context.Context, events ...Event) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range events {
		m.seq[events[i].RunID]++
		events[i].Seq = m.seq[events[i].RunID]
		if events[i].Type == EvCooldown {
			var d CooldownData
			asData(events[i].Data, &d)
			m.cooldowns[events[i].Agent] = d.Until
		}
		m.events = append(m.events, events[i])
	}
	return nil
}

func (m *memRecorder) Log(l LogLine) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.logs = append(m.logs, l)
}

func (m *memRecorder) Flush(context.Context) error { return nil }

func (m *memRecorder) BlackboardWrite(_ context.Context, runID, key string, value json.RawMessage, author string) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.board[runID] == nil {
		m.board[runID] = map[string]BlackboardEntry{}
	}
	v := m.board[runID][key].Version + 1
	m.board[runID][key] = BlackboardEntry{Key: key, Value: value, Version: v, Author: author, At: time.Now()}
	m.seq[runID]++
	m.events = append(m.events, Event{RunID: runID, Seq: m.seq[runID], Type: EvBlackboard, Agent: author})
	return v, nil
}

func (m *memRecorder) BlackboardRead(_ context.Context, runID, key string) (BlackboardEntry, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.board[runID][key]
	return e, ok, nil
}

func (m *memRecorder) Blackboard(_ context.Context, runID string) (map[string]BlackboardEntry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]BlackboardEntry{}
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

func (m *memRecorder) Commands(_ context.Context, runID string) ([]Command, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Command
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

func (m *memRecorder) LoadRun(context.Context, string) (*RunRecord, error) { return nil, nil }

// of returns the events of one type, in order.
func (m *memRecorder) of(typ string) []Event {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Event
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
	for _, e := range m.of(EvCueState) {
		out[e.Cue] = e.State
	}
	return out
}

// asData sets *v to an event's data, which must be of v's type (nil data
// leaves it alone).
func asData(data EventData, v any) {
	if data != nil {
		reflect.ValueOf(v).Elem().Set(reflect.ValueOf(data))
	}
}

func (m *memRecorder) Heartbeat(context.Context, string, string) error { return nil }

func (m *memRecorder) BlackboardWriteMany(ctx context.Context, runID string, puts []BlackboardPut) ([]BlackboardWritten, error) {
	written := make([]BlackboardWritten, len(puts))
	for i, p := range puts {
		if cur, _, _ := m.BlackboardRead(ctx, runID, p.Key); p.IfVersion != nil && *p.IfVersion != cur.Version {
			written[i] = BlackboardWritten{Version: cur.Version, Author: cur.Author, Conflict: true,
				Event: Event{RunID: runID, Type: EvBlackboardConflict, Cue: p.Cue, Agent: p.Author, Attempt: p.Attempt,
					Data: BlackboardConflictData{Key: p.Key, ExpectedVersion: *p.IfVersion, CurrentVersion: cur.Version, Author: cur.Author, MessageID: p.MessageID}}}
			m.mu.Lock()
			m.events = append(m.events, written[i].Event)
			m.mu.Unlock()
			continue
		}
		v, err := m.BlackboardWrite(ctx, runID, p.Key, p.Value, p.Author)
		if err != nil {
			return written[:i], err
		}
		written[i] = BlackboardWritten{Version: v, Author: p.Author, Event: Event{RunID: runID, Type: EvBlackboard, Cue: p.Cue, Agent: p.Author,
			Attempt: p.Attempt, Data: BlackboardData{Key: p.Key, Version: v, MessageID: p.MessageID}}}
	}
	return written, nil
}

// MemoryWrite and MemorySearch keep items in a map; search matches the
// query as a substring of the text (full-text search is the store's).
func (m *memRecorder) MemoryWrite(_ context.Context, item MemoryItem) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.memory == nil {
		m.memory = map[string]MemoryItem{}
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

func (m *memRecorder) MemorySearch(_ context.Context, query string, _ int) ([]MemoryItem, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []MemoryItem
	for _, it := range m.memory {
		if strings.Contains(it.Text, query) {
			out = append(out, it)
		}
	}
	return out, nil
}

// dataJSON is an event's data as the recorder stores it.
func dataJSON(data EventData) string {
	b, err := json.Marshal(data)
	if err != nil {
		panic(err)
	}
	return string(b)
}
