package driver

import "github.com/orch-cli/orch/protocols"

// privateBody stands for a private message's body in the records of those
// who do not see it.
const privateBody = "(private: recorded only where its recipient sees it)"

// Withheld is the record of a message an agent sent: as sent, except that a
// private message.send keeps its body only in the record of its delivery
// (the message.received to its recipient), so that the run's log shows it
// where the recipient sees it and nowhere else. Both engines record it so.
func Withheld(wm *Wire) *Wire {
	b, ok := wm.Msg.Body.(protocols.MessageSend)
	if !ok || !b.Private {
		return wm
	}
	b.Body = privateBody
	m := wm.Msg
	m.Body = b
	raw, err := protocols.Encode(m)
	if err != nil {
		return &Wire{Msg: m, Raw: []byte(`{"message_type":"message.send","private":true}`)}
	}
	return &Wire{Msg: m, Raw: raw}
}
