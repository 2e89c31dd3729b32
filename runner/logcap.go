package runner

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/orch-cli/orch/runner/attempt"
	"github.com/orch-cli/orch/runner/driver"
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/redact"
)

// DefaultMaxLog is what one attempt's output may cost the store when the
// cuelist's defaults.max_log does not say.
const DefaultMaxLog = 10 << 20

// logRowCost is what a log line costs the store beyond its text: its row
// and its index entries. Counting it keeps a flood of empty lines bounded.
const logRowCost = 100

// logCap bounds what one attempt's output costs the store (max_log), without
// holding it all: the first half of the budget is logged as it comes; past
// it, lines wait in a ring holding the last half, the oldest dropped as new
// ones come; close logs a line saying what was dropped, then the ring. So
// the store keeps the start of the output and its end, never more than the
// budget, and memory holds at most half of it.
type logCap struct {
	mu     sync.Mutex
	log    func(record.LogLine)
	mask   *redact.Redactor // a line longer than MaxLine is masked, then cut (cutLine)
	head   int64            // budget of the lines logged as they come
	tail   int64            // budget of the ring
	spent  int64            // cost of the lines logged
	closed bool             // see close
	ring   []record.LogLine
	first  int   // index of the oldest line in ring
	held   int64 // cost of the lines in the ring
	// dropped since the last close: lines and bytes of text
	droppedLines, droppedBytes int64
}

// newLogCap makes the budget of one attempt's output (or of a jsonl agent's
// stderr while no attempt uses it).
func (r *run) newLogCap() *logCap {
	max := int64(r.plan.Cuelist.Defaults.MaxLog)
	if max <= 0 {
		max = DefaultMaxLog
	}
	return &logCap{log: r.rec.Log, mask: r.redact, head: max - max/2, tail: max / 2}
}

func lineCost(l record.LogLine) int64 { return int64(len(l.Text)) + logRowCost }

// Add logs l, or keeps it for Close.
func (c *logCap) Add(l record.LogLine) {
	if len(l.Text) > attempt.MaxLine {
		l.Text = cutLine(l.Text, c.mask)
	}
	cost := lineCost(l)
	c.mu.Lock()
	defer c.mu.Unlock()
	if (!c.closed && c.held == 0 && c.spent+cost <= c.head) || (c.closed && c.spent+cost <= c.head+c.tail) {
		c.spent += cost
		c.log(l)
		return
	}
	if c.closed {
		c.droppedLines++
		c.droppedBytes += int64(len(l.Text)) + 1
		return
	}
	c.ring = append(c.ring, l)
	c.held += cost
	for c.held > c.tail && c.first < len(c.ring) {
		old := c.ring[c.first]
		c.ring[c.first] = record.LogLine{}
		c.first++
		c.held -= lineCost(old)
		c.droppedLines++
		c.droppedBytes += int64(len(old.Text)) + 1
	}
	if c.first > len(c.ring)/2 { // reuse the dropped half
		c.ring = append(c.ring[:0], c.ring[c.first:]...)
		c.first = 0
	}
}

// Close logs what was held back, after a line saying what was dropped. A
// line that comes later (a jsonl agent's stderr, after its attempt ended)
// is logged while the budget lasts, and dropped past it; the next Close
// says so.
func (c *logCap) Close(note record.LogLine) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.droppedLines > 0 {
		note.At = time.Now().UTC()
		note.Text = fmt.Sprintf("… %s (%s) dropped: the log keeps the first and the last %s of each attempt (defaults.max_log %s)",
			record.HumanBytes(c.droppedBytes), record.Plural(c.droppedLines, "line"), record.HumanBytes(c.tail), record.HumanBytes(c.head+c.tail))
		c.log(note)
		c.droppedLines, c.droppedBytes = 0, 0
	}
	for _, l := range c.ring[c.first:] {
		c.log(l)
	}
	c.spent += c.held
	c.ring, c.first, c.held = nil, 0, 0
	c.closed = true
}

// cutLine masks a line longer than MaxLine (lineWriter kept some more of
// it), then cuts it at MaxLine: mask, then cut.
func cutLine(text string, d *redact.Redactor) string {
	text, cut := strings.CutSuffix(text, driver.CutMarker)
	text = d.Text(text)
	if len(text) > attempt.MaxLine {
		text, cut = text[:attempt.MaxLine], true
	}
	if cut {
		text += driver.CutMarker
	}
	return text
}
