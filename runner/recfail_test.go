//go:build unix

package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/orch-cli/orch/runner/record"
)

// errInjected stands for what a store says when it cannot write.
var errInjected = errors.New("database or disk is full (injected)")

// failingRecorder is the in-memory recorder with one kind of write failing
// from its nth call on.
type failingRecorder struct {
	*memRecorder
	kind string // decision, append, attempt, board, log, lease
	from int

	mu     sync.Mutex
	calls  int
	logErr error
}

// hit counts a call of the failing kind and reports whether it fails.
func (f *failingRecorder) hit() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	return f.calls >= f.from
}

func (f *failingRecorder) Append(ctx context.Context, events ...record.Event) error {
	switch f.kind {
	case "append":
		if f.hit() {
			return errInjected
		}
	case "decision": // the commits that start attempts
		for _, e := range events {
			if e.Type == record.EvAttemptStarted {
				if f.hit() {
					return errInjected
				}
				break
			}
		}
	case "attempt": // what attempts record themselves: an agent's blackboard.read
		for _, e := range events {
			if e.Type == record.EvMessage && strings.Contains(dataJSON(e.Data), `"message_type":"blackboard.read"`) {
				if f.hit() {
					return errInjected
				}
				break
			}
		}
	}
	return f.memRecorder.Append(ctx, events...)
}

func (f *failingRecorder) BlackboardWriteMany(ctx context.Context, runID string, puts []record.BlackboardPut) ([]record.BlackboardWritten, error) {
	if f.kind == "board" && f.hit() {
		return nil, errInjected
	}
	return f.memRecorder.BlackboardWriteMany(ctx, runID, puts)
}

// Log loses the line, as a store does that cannot write it: the next
// Flush says so.
func (f *failingRecorder) Log(l record.LogLine) {
	if f.kind == "log" && f.hit() {
		f.mu.Lock()
		f.logErr = errInjected
		f.mu.Unlock()
		return
	}
	f.memRecorder.Log(l)
}

func (f *failingRecorder) Flush(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	err := f.logErr
	f.logErr = nil
	return err
}

func (f *failingRecorder) Heartbeat(context.Context, string, string) error {
	if f.kind == "lease" && f.hit() {
		return record.ErrLeaseLost
	}
	return nil
}

// TestRecorderFailureEndsTheRun: whatever write fails (a decision's commit,
// an attempt's record, a blackboard write, the agents' output, the lease),
// the run stops every agent and returns the recorder's error; it never
// waits for an attempt that could not start.
func TestRecorderFailureEndsTheRun(t *testing.T) {
	for _, tc := range []struct {
		kind string
		from int
		want string
	}{
		{"decision", 2, errInjected.Error()}, // B's start: A's went through
		{"append", 5, errInjected.Error()},
		{"attempt", 1, errInjected.Error()},
		{"board", 1, errInjected.Error()},
		{"log", 20, errInjected.Error()},
		{"lease", 2, record.ErrLeaseLost.Error()},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			step := func(cue string) string {
				return fmt.Sprintf(`script: [{pidfile: %s.pid}, {bb_write: {key: k%s, value: 1}}, {bb_read: k%s}, {sleep: 50ms}]`, cue, cue, cue)
			}
			p, dir := project(t, map[string]string{
				"cuelist.yaml": "cuelist:\n  id: t\n  include: [agents.yaml]\n  defaults: {timeout: 10m}\n  cues:\n" +
					"    - {id: CHATTY, agents: [chatty]}\n" +
					"    - {id: A, agents: [worker], inputs: {" + step("A") + "}}\n" +
					"    - {id: B, agents: [worker], dependencies: [A], inputs: {" + step("B") + "}}\n" +
					"    - {id: C, agents: [worker], dependencies: [B], inputs: {" + step("C") + "}}\n",
				"agents.yaml": "agent: {id: chatty, command: [sh, chatty.sh]}\n---\n" + scriptAgent(t, "worker", ""),
				"chatty.sh":   "echo $$ > CHATTY.pid\nwhile :; do echo chatter; sleep 0.01; done\n",
			})
			rec := &failingRecorder{memRecorder: newMemRecorder(), kind: tc.kind, from: tc.from}
			opts := Options{Plan: p, Recorder: rec, Inputs: p.Cuelist.Inputs, KillGrace: 2 * time.Second, ProjectRoot: dir}
			type outcome struct {
				res *Result
				err error
			}
			ended := make(chan outcome, 1)
			go func() {
				res, err := Run(context.Background(), opts)
				ended <- outcome{res, err}
			}()
			var o outcome
			select {
			case o = <-ended:
			case <-time.After(60 * time.Second): // a hang guard, not a measure
				t.Fatal("the run did not end after its recorder failed")
			}
			var re *RecordError
			if !errors.As(o.err, &re) || !strings.Contains(o.err.Error(), tc.want) {
				t.Fatalf("run returned %v, %v; want a RecordError saying %q", o.res, o.err, tc.want)
			}
			for _, cue := range []string{"CHATTY", "A", "B", "C"} {
				b, err := os.ReadFile(filepath.Join(dir, cue+".pid"))
				if err != nil {
					continue // never started
				}
				pid := atoi(strings.TrimSpace(string(b)))
				if alive(pid) {
					t.Errorf("%s's agent (pid %d) is still running after the run ended", cue, pid)
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		})
	}
}

// TestRecorderFailureAtStart: a run whose start cannot be recorded does not
// exist; its error is not a RecordError (whose advice is orch resume).
func TestRecorderFailureAtStart(t *testing.T) {
	p, _ := project(t, map[string]string{
		"cuelist.yaml": agentsHead + "  cues:\n    - {id: A, agents: [ok]}\n",
		"agents.yaml":  `agent: {id: ok, command: ["true"]}`,
	})
	rec := &failingRecorder{memRecorder: newMemRecorder(), kind: "append", from: 1}
	_, err := Run(context.Background(), Options{Plan: p, Recorder: rec, KillGrace: time.Second})
	var re *RecordError
	if err == nil || errors.As(err, &re) || !strings.Contains(err.Error(), "starting run") || !strings.Contains(err.Error(), errInjected.Error()) {
		t.Fatalf("Run returned %v, want an error starting the run that says %q", err, errInjected)
	}
}
