package temporal

import (
	"encoding/json"

	"go.temporal.io/sdk/workflow"

	"github.com/orch-cli/orch/runner/record"
)

// listen adds the signals to the workflow's selector: what people do to the
// run (orch go, orch answer, orch stop, orch bb set).
func (w *wf) listen() {
	ctx := w.ctx
	c := w.collaborate() // and what its agents ask (collab.go)
	w.registerNeeds()    // and which agents it still needs (needs.go)
	w.chain.collab = c   // continue.go carries its usage totals
	if w.in.Carry != nil {
		c.used = w.in.Carry.Used
	}
	w.sel.AddReceive(workflow.GetSignalChannel(ctx, SignalGo), func(ch workflow.ReceiveChannel, _ bool) {
		var s GoSignal
		ch.Receive(ctx, &s)
		by := "orch go"
		if s.By != "" {
			by = s.By
		}
		if w.core.Approve(s.Cue, by) {
			w.apply()
			w.resumeFromPause("GO for " + s.Cue + " (" + by + ")")
			return
		}
		w.emit(record.Event{Type: record.EvNote, Cue: s.Cue, Reason: "orch go " + s.Cue + ": the run has no such cue, or it already had its GO"})
	})
	w.sel.AddReceive(workflow.GetSignalChannel(ctx, SignalStop), func(ch workflow.ReceiveChannel, _ bool) {
		var s StopSignal
		ch.Receive(ctx, &s)
		reason := "orch stop"
		if s.By != "" {
			reason = s.By
		}
		if s.Cue == "" {
			w.stopWhy = reason
			return
		}
		if ok, why := w.core.StopCue(s.Cue, reason); !ok {
			w.emit(record.Event{Type: record.EvNote, Cue: s.Cue, Reason: "orch stop " + s.Cue + ": " + why})
		}
		w.apply()
	})
	w.sel.AddReceive(workflow.GetSignalChannel(ctx, SignalBBSet), func(ch workflow.ReceiveChannel, _ bool) {
		var s BBSetSignal
		ch.Receive(ctx, &s)
		b, err := json.Marshal(s.Value)
		if err != nil || s.Key == "" {
			w.emit(record.Event{Type: record.EvNote, Reason: "orch bb set: a key and a JSON value are needed"})
			return
		}
		by := s.By
		if by == "" {
			by = "person"
		}
		w.writeBoard(s.Key, b, by, "")
	})
	w.sel.AddReceive(workflow.GetSignalChannel(ctx, SignalAnswer), func(ch workflow.ReceiveChannel, _ bool) {
		var s AnswerSignal
		ch.Receive(ctx, &s)
		c.answer(s)
	})
}
