package runner

import (
	"context"
	"encoding/json"

	"github.com/orch-cli/orch/protocols"
)

// serve handles a message an agent sent that is not the reply being waited
// for: the hub side of hub and spoke. Requests get their answer; state
// reports are recorded (they already are, as messages); anything else gets
// a protocol.error with the reason, and the agent goes on.
func (r *run) serve(a *attempt, ap *agentProcess, msg protocols.Message) *failure {
	ctx := context.Background()
	reply := func(b protocols.Body) *failure { return ap.send(a, protocols.Reply(msg, b)) }
	switch b := msg.Body.(type) {
	case protocols.BlackboardWrite:
		raw, err := json.Marshal(b.Value)
		if err != nil {
			return reply(protocols.ProtocolError{Reason: "blackboard.write: value cannot be stored: " + err.Error()})
		}
		v, err := r.rec.BlackboardWrite(ctx, r.id, b.Key, json.RawMessage(r.redact.text(string(raw))), a.agent.ID)
		if err != nil {
			return reply(protocols.ProtocolError{Reason: "blackboard.write failed: " + err.Error()})
		}
		return reply(protocols.BlackboardAck{Key: b.Key, Version: v})
	case protocols.BlackboardRead:
		e, ok, err := r.rec.BlackboardRead(ctx, r.id, b.Key)
		if err != nil {
			return reply(protocols.ProtocolError{Reason: "blackboard.read failed: " + err.Error()})
		}
		val := protocols.BlackboardValue{Key: b.Key, Found: ok}
		if ok {
			var v any
			_ = json.Unmarshal(e.Value, &v)
			val.Value, val.Version, val.Author = v, e.Version, e.Author
		}
		return reply(val)
	}
	ch, err := protocols.Route(msg.Type)
	switch {
	case err != nil:
		return reply(protocols.ProtocolError{Reason: err.Error()})
	case ch == protocols.ChannelStatus || ch == protocols.ChannelEscalation:
		return nil // recorded; exception-based reporting needs no answer
	case !protocols.FromAgent(msg.Type):
		return reply(protocols.ProtocolError{Reason: msg.Type + " is sent by orch, not by agents"})
	}
	return reply(protocols.ProtocolError{Reason: msg.Type + " is not supported by this version of orch"})
}
