package runner

import (
	"fmt"
	"runtime"
)

// RunsProcesses reports whether orch can run agents on this platform, and
// why not: runs need Unix process groups and signals (Linux and macOS).
// Validating, planning and reading recorded runs work everywhere.
func RunsProcesses() error { return runsProcesses(runtime.GOOS, runtime.GOARCH) }

func runsProcesses(goos, goarch string) error {
	if goos == "windows" {
		return fmt.Errorf("orch cannot run agents on %s/%s: runs need Linux or macOS (validate, plan, schema, status, events and logs work here)", goos, goarch)
	}
	return nil
}
