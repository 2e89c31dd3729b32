package protocols

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// The table below is the one place that says, per message type, which struct
// carries its body, whether an agent may send it to orch, and which answers it
// expects. Decode, Encode, FromAgent, ExpectedReplies and CheckReply all read
// it, so they cannot disagree. The order is the schema's.
var table = []struct {
	body      Body
	fromAgent bool
	replies   []string
}{
	{CoordWarning{}, false, []string{TypeAckWarning}},
	{CoordStandby{}, false, []string{TypeAckStandby}},
	{CoordGo{}, false, []string{TypeTaskComplete, TypeTaskFailed}},
	{CoordStop{}, false, nil},
	{AckWarning{}, true, nil},
	{AckStandby{}, true, nil},
	{TaskComplete{}, true, nil},
	{TaskFailed{}, true, nil},
	{TaskHandoff{}, true, []string{TypeHandoffResult}},
	{HandoffResult{}, false, nil},
	{TaskSpawn{}, true, []string{TypeSpawnAccepted}},
	{SpawnAccepted{}, false, nil},
	{TaskAnnounce{}, false, nil},
	{BlackboardWrite{}, true, []string{TypeBlackboardAck, TypeBlackboardConflict}},
	{BlackboardAck{}, false, nil},
	{BlackboardRead{}, true, []string{TypeBlackboardValue}},
	{BlackboardValue{}, false, nil},
	{QuestionAsk{}, true, []string{TypeQuestionAnswer}},
	// An agent sends question.answer when it answers a question from its child.
	{QuestionAnswer{}, true, nil},
	{MessageSend{}, true, []string{TypeMessageSent, TypeDeliveryFailed}},
	{MessageSent{}, false, nil},
	{MessageUser{}, true, nil},
	{MessageNotice{}, false, nil},
	{MessageReceived{}, false, nil},
	{DeliveryFailed{}, false, nil},
	{DiscoveryReport{}, true, nil},
	{MemoryWrite{}, true, []string{TypeMemoryAck}},
	{MemoryAck{}, false, nil},
	{MemorySearch{}, true, []string{TypeMemoryResults}},
	{MemoryResults{}, false, nil},
	{StatusUpdate{}, true, nil},
	{StatusUsage{}, true, nil},
	{EscalationConflict{}, true, nil},
	{EscalationError{}, true, nil},
	{GuardWarning{}, false, nil},
	{ProtocolError{}, false, nil},
	{AgentsList{}, true, []string{TypeAgentsListed}},
	{AgentsListed{}, false, nil},
	{BroadcastSend{}, true, []string{TypeBroadcastSent}},
	{BroadcastSent{}, false, nil},
	{BroadcastNotice{}, false, nil},
	{StatusRequest{}, false, []string{TypeStatusReport}},
	{StatusReport{}, true, nil},
	{NotifyMode{}, true, []string{TypeNotifyAck}},
	{NotifyAck{}, false, nil},
	// Added later (board.go): kept at the end, in the schema's order.
	{BlackboardWatch{}, true, []string{TypeBlackboardWatching}},
	{BlackboardWatching{}, false, nil},
	{BlackboardChanged{}, false, nil},
	{BlackboardConflict{}, false, nil},
	{MemoryDelete{}, true, []string{TypeMemoryAck}},
}

// typeInfo is the decoded form of one table row.
type typeInfo struct {
	name      string
	typ       reflect.Type // the body struct
	fromAgent bool
	replies   []string
	fields    []*field // in struct order
	byName    map[string]*field
}

// jsonKind is the JSON type a field accepts, derived from its Go type.
type jsonKind uint8

const (
	kindAny jsonKind = iota // any JSON value, null included
	kindString
	kindBool
	kindInteger
	kindNumber
	kindObject
	kindArray
)

var kindNames = [...]string{"any value", "a string", "a boolean", "an integer", "a number", "an object", "an array"}

func (k jsonKind) String() string { return kindNames[k] }

// field describes one body field: its wire name, Go type and constraints.
type field struct {
	name      string
	index     int
	typ       reflect.Type
	kind      jsonKind
	required  bool
	omitempty bool
	nonempty  bool
	min       *float64
	enum      []string
}

// registry is the table read into each type's fields, by type and in the
// schema's order. It is built at first use, not at package init: every orch
// command links this package, and most (an orch run of agents without a
// protocol, orch status) never decode or encode a message.
var registry = sync.OnceValue(func() (r struct {
	byType map[string]*typeInfo
	types  []string
}) {
	r.byType = make(map[string]*typeInfo, len(table))
	for _, row := range table {
		info := &typeInfo{
			name:      row.body.MessageType(),
			typ:       reflect.TypeOf(row.body),
			fromAgent: row.fromAgent,
			replies:   row.replies,
			byName:    map[string]*field{},
		}
		for i := 0; i < info.typ.NumField(); i++ {
			f, err := newField(info.typ.Field(i), i)
			if err != nil {
				// A bad tag is a bug in this package; the tests catch it.
				panic(fmt.Sprintf("protocols: %s: %v", info.name, err))
			}
			info.fields = append(info.fields, f)
			info.byName[f.name] = f
		}
		r.byType[info.name] = info
		r.types = append(r.types, info.name)
	}
	return r
})

// newField reads the json and protocol tags of a body struct field.
func newField(sf reflect.StructField, index int) (*field, error) {
	name, opts, _ := strings.Cut(sf.Tag.Get("json"), ",")
	if name == "" || name == "-" {
		return nil, fmt.Errorf("field %s has no json name", sf.Name)
	}
	f := &field{name: name, index: index, typ: sf.Type, omitempty: opts == "omitempty"}
	switch sf.Type.Kind() {
	case reflect.String:
		f.kind = kindString
	case reflect.Bool:
		f.kind = kindBool
	case reflect.Int, reflect.Int64:
		f.kind = kindInteger
	case reflect.Float64:
		f.kind = kindNumber
	case reflect.Map, reflect.Struct:
		f.kind = kindObject
	case reflect.Slice:
		f.kind = kindArray
	case reflect.Interface:
		f.kind = kindAny
	case reflect.Pointer: // an optional integer where 0 means something (expected_version)
		if k := sf.Type.Elem().Kind(); k != reflect.Int && k != reflect.Int64 {
			return nil, fmt.Errorf("field %s: unsupported type %s", name, sf.Type)
		}
		f.kind = kindInteger
	default:
		return nil, fmt.Errorf("field %s: unsupported type %s", name, sf.Type)
	}
	tag := sf.Tag.Get("protocol")
	if tag == "" {
		return f, nil
	}
	for _, opt := range strings.Split(tag, ",") {
		switch key, val, _ := strings.Cut(opt, "="); key {
		case "required":
			f.required = true
		case "nonempty":
			f.nonempty = true
		case "min":
			m, err := strconv.ParseFloat(val, 64)
			if err != nil {
				return nil, fmt.Errorf("field %s: bad min %q", name, val)
			}
			f.min = &m
		case "enum":
			f.enum = strings.Split(val, "|")
		default:
			return nil, fmt.Errorf("field %s: unknown protocol tag %q", name, opt)
		}
	}
	if f.required && f.omitempty {
		return nil, fmt.Errorf("field %s is required but omitempty", name)
	}
	return f, nil
}

// CueOf returns a message's cue_id (the task it is for), or "" if its type
// has none or it is not set.
func CueOf(m Message) string {
	info := registry().byType[m.Type]
	if info == nil || m.Body == nil {
		return ""
	}
	f := info.byName["cue_id"]
	if f == nil {
		return ""
	}
	v := reflect.ValueOf(m.Body)
	if v.Kind() != reflect.Struct || v.Type() != info.typ {
		return ""
	}
	return v.Field(f.index).String()
}

// Types returns every message type, in the schema's order.
func Types() []string {
	return append([]string(nil), registry().types...)
}

// Known reports whether t is a message type of the protocol.
func Known(t string) bool {
	return registry().byType[t] != nil
}

// FromAgent reports whether an agent may send a message of type t to orch: its
// answers (ack.*, task.complete, task.failed, question.answer to a child) and
// its requests (task.handoff, task.spawn, blackboard.write/read, question.ask,
// message.send, message.user, discovery.report, memory.*, status.*,
// escalation.*). Everything else (coord.*, the answers to requests, notices)
// only orch sends; from an agent it is a protocol error.
func FromAgent(t string) bool {
	info := registry().byType[t]
	return info != nil && info.fromAgent
}

// ExpectedReplies returns the message types that may answer a message of type
// t, or nil if it expects no answer (coord.stop, the answers themselves,
// notices, status and escalation reports). The result is a fresh slice.
func ExpectedReplies(t string) []string {
	info := registry().byType[t]
	if info == nil || len(info.replies) == 0 {
		return nil
	}
	return append([]string(nil), info.replies...)
}

// Channel is where the hub sends a message, chosen by the prefix of its type
// (seed Protocol 2, hub and spoke: every message goes through the hub, which
// hands it to the part of orch that deals with that kind of message).
type Channel string

const (
	ChannelCue        Channel = "cue"        // coord.*, ack.*: the cue manager (phases of a cue)
	ChannelTask       Channel = "task"       // task.*, handoff.*, spawn.*: task distribution
	ChannelStatus     Channel = "status"     // status.*: monitoring (state changes, usage)
	ChannelEscalation Channel = "escalation" // escalation.*: conflicts and errors for the hub
	ChannelBlackboard Channel = "blackboard" // blackboard.*: the run's shared board
	ChannelQuestion   Channel = "question"   // question.*: bubbling questions up the chain
	ChannelMessage    Channel = "message"    // message.*, discovery.*, delivery.*: agent-to-agent and to the person
	ChannelMemory     Channel = "memory"     // memory.*: memory across runs
	ChannelGuard      Channel = "guard"      // guard.*: loop and flood guards
	ChannelProtocol   Channel = "protocol"   // protocol.*: the hub's own errors
	ChannelAgents     Channel = "agents"     // agents.*: who is at work in the run
	ChannelBroadcast  Channel = "broadcast"  // broadcast.*: to every agent at work
	ChannelNotify     Channel = "notify"     // notify.*: how children's notices reach their parent
)

// prefixes maps the part of a message type before the first dot to its channel.
var prefixes = map[string]Channel{
	"coord":      ChannelCue,
	"ack":        ChannelCue,
	"task":       ChannelTask,
	"handoff":    ChannelTask,
	"spawn":      ChannelTask,
	"status":     ChannelStatus,
	"escalation": ChannelEscalation,
	"blackboard": ChannelBlackboard,
	"question":   ChannelQuestion,
	"message":    ChannelMessage,
	"discovery":  ChannelMessage,
	"delivery":   ChannelMessage,
	"memory":     ChannelMemory,
	"guard":      ChannelGuard,
	"protocol":   ChannelProtocol,
	"agents":     ChannelAgents,
	"broadcast":  ChannelBroadcast,
	"notify":     ChannelNotify,
}

// Route returns the channel for a message type, by its prefix: "status.update"
// and any other "status.*" go to ChannelStatus. Like the seed's route_message,
// it looks only at the prefix, so the hub can route a type this version does
// not know in detail; Decode is what rejects unknown types. A type without a
// "prefix.name" shape or with an unknown prefix is an error.
func Route(messageType string) (Channel, error) {
	prefix, name, ok := strings.Cut(messageType, ".")
	if !ok || prefix == "" || name == "" {
		return "", fmt.Errorf("cannot route message type %q: want prefix.name, such as status.update", clip(messageType, 64))
	}
	ch, ok := prefixes[prefix]
	if !ok {
		return "", fmt.Errorf("cannot route message type %q: unknown prefix %q", clip(messageType, 64), clip(prefix, 64))
	}
	return ch, nil
}

// clip shortens s for an error message, so a hostile megabyte-long type name
// does not end up in a log line.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
