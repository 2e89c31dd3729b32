package control

import (
	"strings"
	"testing"
)

// A released orch names its own version for go install; a build of a clone
// (dev, a version with a build suffix) is told to build orch-temporal there.
func TestInstallHint(t *testing.T) {
	for _, tc := range []struct{ version, want string }{
		{"v1.2.3", "go install github.com/orch-cli/orch/cmd/orch-temporal@v1.2.3"},
		{"v0.0.0-20261126011740-a117f97abcde", "@v0.0.0-20261126011740-a117f97abcde"},
		{"dev", "go build -o "},
		{"(devel)", "go build -o "},
	} {
		if got := installHint(tc.version); !strings.Contains(got, tc.want) {
			t.Errorf("installHint(%q) = %q, want %q in it", tc.version, got, tc.want)
		}
	}
}
