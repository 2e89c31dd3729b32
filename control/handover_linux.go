package control

import (
	"os/exec"
	"syscall"
)

// dieWithParent asks the kernel to send orch-temporal SIGTERM when orch dies
// (PR_SET_PDEATHSIG), so a kill -9 of orch worker drains its worker at once.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
