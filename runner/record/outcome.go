package record

import (
	"crypto/rand"
	"encoding/hex"
)

// CueOutcome is where a run left one of its plan's cues.
type CueOutcome struct {
	ID     string
	State  CueState
	Reason string
}

// NewRunID returns a fresh run id: 12 hex digits, so a short prefix is unique.
func NewRunID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
