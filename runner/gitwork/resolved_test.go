package gitwork

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A conflict marker after a line longer than any line orch reads (a
// minified file, generated data) is still found: the check does not stop
// at that line and pass the file as resolved.
func TestMarkerAfterLongLine(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("x", 2<<20)
	for name, tc := range map[string]struct {
		text string
		want bool
	}{
		"after":  {long + "\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> B\n", true},
		"inside": {"a\n" + long + "<<<<<<< HEAD\n", false},
		"none":   {long + "\nplain\n", false},
		"last":   {"a\n>>>>>>>", true},
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := hasMarker(path); got != tc.want {
			t.Errorf("%s: hasMarker %v, want %v", name, got, tc.want)
		}
	}
}
