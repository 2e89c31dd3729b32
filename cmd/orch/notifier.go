package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/runner/store"
	"github.com/orch-cli/orch/spec"
)

// Bounds of notifying; variables for the tests.
var (
	notifyTimeout = 10 * time.Second // one delivery, unless notify.timeout says
	notifyWait    = 5 * time.Second  // at the run's end, for the notices still pending
	notifyBackoff = time.Second      // before a webhook's second try; doubled after
)

const (
	notifyQueue = 64 // notices waiting to be sent; past it they are dropped (and recorded so)
	notifyTries = 3  // a webhook's tries on a network error or a 5xx
)

// notice is what a command reads on its stdin and a webhook receives.
type notice struct {
	Kind     string          `json:"kind"` // needed, failed, completed
	Run      string          `json:"run"`
	Cuelist  string          `json:"cuelist"`
	Subject  string          `json:"subject"` // one line saying what happened
	Cue      string          `json:"cue,omitempty"`
	Agent    string          `json:"agent,omitempty"`
	Question *noticeQuestion `json:"question,omitempty"`
	Next     string          `json:"next,omitempty"` // the command that acts on it
	At       time.Time       `json:"at"`
}

type noticeQuestion struct {
	ID         string `json:"id"`
	Text       string `json:"text"`
	Complexity string `json:"complexity"`
}

// sink is where notices go: a command or a webhook.
type sink interface {
	name() string // for the event: never a secret (a URL's path may hold a token)
	send(ctx context.Context, body []byte) (tries int, err error)
}

// notifier sends a run's notices without ever holding the run up: the
// observer queues them (dropping past notifyQueue) and one goroutine sends
// them and records each as an event, sent or failed.
type notifier struct {
	db      *store.DB
	cuelist string
	on      *spec.Notify // which kinds are sent
	sinks   []sink
	bell    io.Writer // a terminal to ring when a person is needed, or nil

	queue   chan notice
	ctx     context.Context // cancelled when the run's end has waited long enough
	cancel  context.CancelFunc
	done    chan struct{}
	mu      sync.Mutex
	runID   string
	dropped int
}

// newNotifier returns the run's notifier: the cuelist's notify block and
// the --notify targets. With nowhere to send and no bell it is nil (every
// method of a nil notifier does nothing).
func newNotifier(db *store.DB, cl *spec.Cuelist, extra []string, bell io.Writer) *notifier {
	sinks := sinksOf(cl.Notify, cl.Dir())
	for _, target := range extra {
		sinks = append(sinks, sinkFor(target, ""))
	}
	if len(sinks) == 0 && bell == nil {
		return nil
	}
	n := &notifier{db: db, cuelist: cl.ID, on: cl.Notify, sinks: sinks, bell: bell,
		queue: make(chan notice, notifyQueue), done: make(chan struct{})}
	n.ctx, n.cancel = context.WithCancel(context.Background())
	go n.loop()
	return n
}

// event turns the run's events into notices.
func (n *notifier) event(e record.Event) {
	if n == nil {
		return
	}
	n.mu.Lock()
	n.runID = e.RunID
	n.mu.Unlock()
	nt := notice{Run: e.RunID, Cuelist: n.cuelist, Cue: e.Cue, Agent: e.Agent, At: e.At}
	switch e.Type {
	case record.EvQuestion:
		d, _ := e.Data.(record.QuestionData)
		if d.To != "person" {
			return
		}
		nt.Kind = "needed"
		nt.Subject = fmt.Sprintf("question %s from %s (%s): %s", d.ID, e.Agent, e.Cue, d.Question)
		nt.Question = &noticeQuestion{ID: d.ID, Text: d.Question, Complexity: d.Complexity}
		nt.Next = fmt.Sprintf("orch answer %s %s TEXT", e.RunID, d.ID)
	case record.EvUserMessage: // a high or critical escalation needs the person at once
		d, _ := e.Data.(record.UserMessageData)
		sev := escalationSeverity(d)
		if sev != "high" && sev != "critical" {
			return
		}
		nt.Kind, nt.Next = "needed", "orch status "+e.RunID
		nt.Subject = describeEvent(e)
	case record.EvRunState:
		switch record.RunState(e.State) {
		case record.RunPaused:
			nt.Kind, nt.Next = "needed", "orch status "+e.RunID
		case record.RunFailed:
			nt.Kind = "failed"
		case record.RunCompleted:
			nt.Kind = "completed"
		default:
			return
		}
		nt.Subject = fmt.Sprintf("run %s %s", e.RunID, e.State)
		if e.Reason != "" && !strings.HasPrefix(e.Reason, e.State) { // "failed: BUILD" says it already
			nt.Subject += ": " + e.Reason
		} else if e.Reason != "" {
			nt.Subject = fmt.Sprintf("run %s %s", e.RunID, e.Reason)
		}
	default:
		return
	}
	n.post(nt)
}

// standingBy is a manual cue asking for GO on the terminal.
func (n *notifier) standingBy(cue string, agents []string) {
	if n == nil {
		return
	}
	n.mu.Lock()
	run := n.runID
	n.mu.Unlock()
	n.post(notice{Kind: "needed", Run: run, Cuelist: n.cuelist, Cue: cue, At: time.Now().UTC(),
		Subject: fmt.Sprintf("%s (%v) is standing by and waits for GO", cue, agents), Next: fmt.Sprintf("orch go %s %s", run, cue)})
}

func (n *notifier) post(nt notice) {
	if nt.Kind == "needed" && n.bell != nil {
		_, _ = io.WriteString(n.bell, "\a")
	}
	if len(n.sinks) == 0 || n.on != nil && !n.on.Wants(nt.Kind) {
		return
	}
	select {
	case n.queue <- nt:
	default:
		n.mu.Lock()
		n.dropped++
		n.mu.Unlock()
	}
}

// finish waits up to notifyWait for the notices still pending; those not
// sent by then are given up (and recorded as failed).
func (n *notifier) finish() {
	if n == nil {
		return
	}
	close(n.queue)
	select {
	case <-n.done:
	case <-time.After(notifyWait):
		n.cancel()
		<-n.done // each try is bound to n.ctx: they end at once
	}
	n.cancel()
	n.mu.Lock()
	dropped, run := n.dropped, n.runID
	n.mu.Unlock()
	if dropped > 0 {
		n.record(record.Event{RunID: run, State: "failed", Reason: fmt.Sprintf("%d notice(s) dropped: more than %d were waiting to be sent", dropped, notifyQueue)}, record.NoticeData{To: "all"})
	}
}

func (n *notifier) loop() {
	defer close(n.done)
	for nt := range n.queue {
		body, _ := json.Marshal(nt)
		for _, s := range n.sinks {
			data := record.NoticeData{Kind: nt.Kind, Subject: nt.Subject, To: s.name()}
			ev := record.Event{RunID: nt.Run, Cue: nt.Cue, State: "sent"}
			if n.ctx.Err() != nil {
				ev.State, ev.Reason = "failed", fmt.Sprintf("not sent: the run ended and its notices were waited for %s", notifyWait)
			} else if tries, err := s.send(n.ctx, body); err != nil {
				data.Tries = tries
				ev.State, ev.Reason = "failed", err.Error()
				if n.ctx.Err() != nil {
					ev.Reason = fmt.Sprintf("given up: the run ended and its notices were waited for %s (%v)", notifyWait, err)
				}
			} else {
				data.Tries = tries
			}
			n.record(ev, data)
		}
	}
}

// record stores a notice's event; a notice that cannot be recorded is
// still sent (the run's own events are what matter).
func (n *notifier) record(ev record.Event, data record.NoticeData) {
	if ev.RunID == "" {
		return
	}
	ev.Type, ev.Data = record.EvNotice, data
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = n.db.Append(ctx, ev)
}
