package editdist

import "testing"

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b  string
		limit int
		want  int
	}{
		{"agent", "agent", 3, 0},
		{"agnet", "agent", 3, 1},       // a transposition is one edit
		{"compelte", "complete", 3, 1}, // in the middle too
		{"task.complet", "task.complete", 3, 1},
		{"cue", "cues", 3, 1},
		{"kitten", "sitting", 3, 3},
		{"kitten", "sitting", 2, 3}, // past the limit: limit+1
		{"a", "abcdefgh", 3, 4},     // lengths alone exceed the limit
		{"wärme", "warme", 3, 1},    // runes, not bytes
		{"", "abc", 3, 3},
	} {
		if got := Distance(c.a, c.b, c.limit); got != c.want {
			t.Errorf("Distance(%q, %q, %d) = %d, want %d", c.a, c.b, c.limit, got, c.want)
		}
	}
}
