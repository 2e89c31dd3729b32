package runner

import (
	"runtime"
	"strings"
	"testing"
)

// TestRunsProcesses: runs refuse on Windows with one message that names
// the platforms that run agents; Linux and macOS run them.
func TestRunsProcesses(t *testing.T) {
	err := runsProcesses("windows", "amd64")
	if err == nil || !strings.Contains(err.Error(), "windows/amd64") || !strings.Contains(err.Error(), "Linux or macOS") {
		t.Errorf("on windows: %v", err)
	}
	for _, goos := range []string{"linux", "darwin"} {
		if err := runsProcesses(goos, "arm64"); err != nil {
			t.Errorf("on %s: %v", goos, err)
		}
	}
	if err := RunsProcesses(); (err == nil) != (runtime.GOOS != "windows") {
		t.Errorf("on %s: %v", runtime.GOOS, err)
	}
}
