package proc

import (
	"fmt"
	"runtime"
)

// Supported reports whether orch can run agents on this platform, and why
// not: runs need Unix process groups and signals (Linux and macOS).
// Validating, planning and reading recorded runs work everywhere.
func Supported() error { return supported(runtime.GOOS, runtime.GOARCH) }

func supported(goos, goarch string) error {
	if goos == "windows" {
		return fmt.Errorf("orch cannot run agents on %s/%s: runs need Linux or macOS (validate, plan, schema, status, events and logs work here)", goos, goarch)
	}
	return nil
}
