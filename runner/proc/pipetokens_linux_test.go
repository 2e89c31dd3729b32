package proc

import (
	"os"
	"testing"
)

// TestStopKeepsAnotherSweepersPipes: of two sweepers of one run (a worker's
// pool of the run closing while a new one starts), the first's Stop leaves
// the output pipes of the run's attempts known, since the second's attempts
// are told by them; the run's last Stop forgets them.
func TestStopKeepsAnotherSweepersPipes(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	const token = "r7/agent/b"
	known := func() bool {
		pipeTokens.Lock()
		defer pipeTokens.Unlock()
		return pipeTokens.m[pipeID(w)] == token
	}
	old, cur := NewSweeper("r7", func(Orphan) {}), NewSweeper("r7", func(Orphan) {})
	old.Start()
	cur.Start()
	cur.Begin(token)
	notePipes(token, w)
	old.Stop()
	if !known() {
		t.Fatal("the first sweeper's Stop forgot the pipes of the other's attempt")
	}
	cur.End(token)
	cur.Stop()
	if known() {
		t.Error("the run's last Stop left its attempts' pipes known")
	}
}
