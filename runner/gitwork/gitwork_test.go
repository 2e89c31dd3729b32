package gitwork

import "testing"

// The names both engines give branches: a fan-out item's brackets and what
// git refuses in a ref are replaced; the result branch steps aside for a
// cue named result.
func TestNames(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Branch("r1", "BUILD", "a", 2, false), "orch/r1/BUILD/2"},
		{Branch("r1", "BUILD[0]", "a", 1, false), "orch/r1/BUILD@0/1"},
		{Branch("r1", "REVIEW", "claude", 1, true), "orch/r1/REVIEW/1-claude"},
		{BranchPart("v1..2"), "v1__2"},
		{ResultBranch("r1", []string{"A", "B"}), "orch/r1/result"},
		{ResultBranch("r1", []string{"A", "Result"}), "orch/r1/_result"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}
