package proc

import (
	"runtime"
	"strings"
	"testing"
)

// TestSupported: runs refuse on Windows with one message that names
// the platforms that run agents; Linux and macOS run them.
func TestSupported(t *testing.T) {
	err := supported("windows", "amd64")
	if err == nil || !strings.Contains(err.Error(), "windows/amd64") || !strings.Contains(err.Error(), "Linux or macOS") {
		t.Errorf("on windows: %v", err)
	}
	for _, goos := range []string{"linux", "darwin"} {
		if err := supported(goos, "arm64"); err != nil {
			t.Errorf("on %s: %v", goos, err)
		}
	}
	if err := Supported(); (err == nil) != (runtime.GOOS != "windows") {
		t.Errorf("on %s: %v", runtime.GOOS, err)
	}
}
