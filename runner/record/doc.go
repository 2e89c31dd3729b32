// Package record is the vocabulary of a run's record, shared by every
// engine (the local runner, engine/temporal), the store (runner/store) and
// the readers (orch status, events, serve):
//
//   - the events (events.go): every change of a run is an Event, whose
//     Data, when its type has one, is one of a sealed set of payloads
//     (eventdata.go), each naming its event type (EventType) as a protocol
//     message's body names its message_type; DecodeEventData is every
//     reader's one decoding, Redact the one masking of secrets;
//   - the states of runs, cues (the scheduler core's, runner/sched) and
//     attempts (states.go);
//   - EventFor (eventfor.go): the record of each decision of the scheduler
//     core, the same whichever engine carries it out;
//   - the Recorder (roles.go): where a run is recorded, the composition of
//     four roles (EventLog, Board, Memory, Control) and their value types;
//     runner/store's *DB is the SQLite one, and a reader asks for the role
//     it needs.
//
// It does no I/O and holds no state.
package record
