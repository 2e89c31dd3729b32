//go:build unix

package control

import (
	"os"
	"os/exec"
	"syscall"
)

// startDetached starts exe (named orch in its argv, as a person types it)
// with args, in a session of its own, so that it outlives the request that
// started it and a Ctrl-C of the caller (sent to the terminal's foreground
// group) does not reach it. Its output is appended to logPath. The child is
// waited for in the background, so that it leaves no zombie.
func startDetached(exe string, args []string, logPath string) (int, error) {
	log, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return 0, err
	}
	defer log.Close() // the child has its own copy
	cmd := exec.Command(exe, args...)
	cmd.Args[0] = "orch"
	cmd.Stdout, cmd.Stderr = log, log // stdin: /dev/null
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	go func() { _ = cmd.Wait() }()
	return cmd.Process.Pid, nil
}
