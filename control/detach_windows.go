package control

import (
	"fmt"

	"github.com/orch-cli/orch/runner/proc"
)

// startDetached refuses: orch runs no agents on Windows (proc.Supported).
func startDetached(exe string, args []string, logPath string) (int, error) {
	return 0, fmt.Errorf("orch serve cannot continue a run here: %w", proc.Supported())
}
