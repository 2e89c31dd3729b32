package sched

import "strings"

// Notification modes of a subtree: how a child's notices (its messages and
// discoveries) reach its parent agent (docs/design.md#notification-mode).
const (
	NotifyImmediate = "immediate" // each at once (the default)
	NotifySummary   = "summary"   // collected, delivered when the child ends, before its result
	NotifySilent    = "silent"    // not delivered (the child's messages are recorded all the same)
)

// NotifyModes are the modes parent agents chose for their children, by the
// parent's task id, and the person's (orch notify-mode), by the task id of
// the subtree's root ("" for the whole run): the person's win. Both
// engines keep one; it does no locking.
type NotifyModes struct {
	agents, person map[string]string
}

// Mode is the mode for the children of task parent: the person's for the
// nearest subtree holding it, else the parent agent's, else immediate.
func (m *NotifyModes) Mode(parent string) string {
	for id := parent; ; {
		if mode, ok := m.person[id]; ok {
			return mode
		}
		if id == "" {
			break
		}
		i := strings.LastIndexByte(id, '/')
		if i < 0 {
			id = ""
		} else {
			id = id[:i]
		}
	}
	if mode, ok := m.agents[parent]; ok {
		return mode
	}
	return NotifyImmediate
}

// Set records a mode: the person's for the subtree of task, or the agent's
// of task for its children.
func (m *NotifyModes) Set(person bool, task, mode string) {
	t := &m.agents
	if person {
		t = &m.person
	}
	if *t == nil {
		*t = map[string]string{}
	}
	(*t)[task] = mode
}
