package store

import "testing"

// TestNoErrorCodeAllocates: asking a nil error for its SQLite code (every
// commit's settle does) allocates nothing.
func TestNoErrorCodeAllocates(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { _ = primaryCode(nil) }); n != 0 {
		t.Errorf("primaryCode(nil) allocates %v times", n)
	}
}
