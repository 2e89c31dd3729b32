package runner

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// procSpec says how to start one agent process.
type procSpec struct {
	argv  []string // started without a shell
	shell string   // or one line for /bin/sh -c (the spec's explicit run:)
	dir   string
	env   []string // complete environment
	token string   // ORCH_ATTEMPT_TOKEN: finds descendants that left the process group
	// cgroup is the run's cgroup (nil: none): the process starts in a leaf
	// of its own, which holds all its descendants.
	cgroup *runCgroup
	// stdio are its streams (see newStdio): startProc takes them over.
	stdio *stdio
}

// proc is a started agent process, leader of its own process group.
type proc struct {
	cmd   *exec.Cmd
	pid   int
	token string
	stdin *os.File      // orch's end of its stdin, or nil
	done  chan struct{} // closed when the process has been waited for
	err   error         // from Wait
	kill  sync.Once
	// output is done when its stdout and stderr are read to the end. The
	// streams end when the last process holding them does; once the leader
	// has exited, a descendant that holds them gets the grace period.
	output sync.WaitGroup
	grace  time.Duration
	io     *stdio
	cg     *procCgroup // its leaf of the run's cgroup, or nil
	// escaped are the processes of its cgroup outside its process group
	// that terminate stopped, for sweep to report.
	escaped []int
}

// exitInfo describes how a process ended.
type exitInfo struct {
	code     int  // exit status, -1 when killed by a signal
	signaled bool // killed by a signal
	signal   syscall.Signal
}

func (e exitInfo) String() string {
	if e.signaled {
		return "killed by " + signalName(e.signal)
	}
	return fmt.Sprintf("exited with status %d", e.code)
}

// startProc starts the process in its own process group, with the streams
// of spec.stdio, and waits for it in the background (done closes when it has
// ended). The caller then starts reading its output (readOutput).
func startProc(spec procSpec, grace time.Duration) (*proc, error) {
	argv := spec.argv
	if spec.shell != "" {
		argv = []string{"/bin/sh", "-c", spec.shell}
	}
	s := spec.stdio
	if len(argv) == 0 {
		s.close()
		return nil, errors.New("no command to run")
	}
	command := func(cg *procCgroup) *exec.Cmd {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = spec.dir
		cmd.Env = append(spec.env, "ORCH_ATTEMPT_TOKEN="+spec.token)
		cmd.SysProcAttr = ownGroup()
		cg.attach(cmd.SysProcAttr)
		if s.childIn != nil { // else os/exec gives it /dev/null
			cmd.Stdin = s.childIn
		}
		cmd.Stdout, cmd.Stderr = s.childOut, s.childErr
		return cmd
	}
	cg := spec.cgroup.leaf()
	cmd := command(cg)
	err := cmd.Start()
	if err != nil && cg != nil { // perhaps the kernel would not start it in the cgroup: try without
		cg.release()
		cg = nil
		cmd = command(nil)
		if err = cmd.Start(); err == nil { // it was the cgroup: the run goes without
			spec.cgroup.failed()
		}
	}
	s.closeChild()
	if err != nil {
		cg.release()
		s.close()
		return nil, startError(argv[0], spec.dir, err)
	}
	p := &proc{cmd: cmd, pid: cmd.Process.Pid, token: spec.token, stdin: s.in, done: make(chan struct{}), grace: grace, io: s, cg: cg}
	p.output.Add(2)
	go p.wait()
	return p, nil
}

// readOutput reads the process's stdout and stderr, each in its own
// goroutine, to the end of the stream (see readAll); output is done then.
// Until it is called the pipes hold what the process writes.
func (p *proc) readOutput(stdout, stderr func(io.Reader)) {
	go func() { defer p.output.Done(); readAll(p.io.out, stdout) }()
	go func() { defer p.output.Done(); readAll(p.io.err, stderr) }()
}

// startError explains why a command could not start, in terms of the spec.
func startError(name, dir string, err error) error {
	switch {
	case errors.Is(err, exec.ErrNotFound):
		return fmt.Errorf("command %q not found in PATH", name)
	case errors.Is(err, os.ErrNotExist):
		if strings.Contains(name, "/") {
			return fmt.Errorf("command %q does not exist (relative to %s)", name, dir)
		}
		return fmt.Errorf("cannot start %q in %s: %v", name, dir, err)
	case errors.Is(err, os.ErrPermission):
		return fmt.Errorf("command %q is not executable", name)
	}
	return fmt.Errorf("cannot start %q: %v", name, err)
}

// wait waits for the process once and records how it ended. What it wrote
// before it exited is still read; a descendant that holds its output open
// gets the grace period, then the streams end.
func (p *proc) wait() {
	p.err = p.cmd.Wait()
	deadline := time.Now().Add(p.grace)
	_ = p.io.out.SetReadDeadline(deadline)
	_ = p.io.err.SetReadDeadline(deadline)
	if p.stdin != nil { // a task the process never read
		_ = p.stdin.SetWriteDeadline(deadline)
	}
	close(p.done)
}

// exit returns how the process ended; valid after done is closed.
func (p *proc) exit() exitInfo {
	st := p.cmd.ProcessState
	if st == nil {
		return exitInfo{code: -1}
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return exitInfo{code: -1, signaled: true, signal: ws.Signal()}
	}
	return exitInfo{code: st.ExitCode()}
}

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGABRT:
		return "SIGABRT"
	}
	return s.String()
}
