package proc

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Spec says how to start one process.
type Spec struct {
	Argv  []string // started without a shell
	Shell string   // or one line for /bin/sh -c (the spec's explicit run:)
	Dir   string
	Env   []string // complete environment
	// Token goes to the process as ORCH_ATTEMPT_TOKEN: it finds descendants
	// that left the process group. It is RUN/... (the run's ID, a slash,
	// anything): the sweeps and KillLeftovers find a run's processes by that
	// prefix.
	Token string
	// Cgroup is the run's cgroup (nil: none, see Sweeper.Cgroup): the
	// process starts in a leaf of its own, which holds all its descendants.
	Cgroup *RunCgroup
	// Stdio are its streams (see NewStdio): Start takes them over.
	Stdio *Stdio
	// Grace is how long its output stays open once it has exited, for a
	// descendant that still holds it, and how long a task it never read
	// may block its stdin.
	Grace time.Duration
}

// Process is a started process, leader of its own process group.
type Process struct {
	cmd   *exec.Cmd
	pid   int
	stdin *os.File      // orch's end of its stdin, or nil
	done  chan struct{} // closed when the process has been waited for
	kill  sync.Once
	// output is done when its stdout and stderr are read to the end. The
	// streams end when the last process holding them does; once the leader
	// has exited, a descendant that holds them gets the grace period.
	output sync.WaitGroup
	grace  time.Duration
	io     *Stdio
	cg     *leafCgroup // its leaf of the run's cgroup, or nil
	// escaped are the processes of its cgroup outside its process group
	// that Terminate stopped, for Sweep to report.
	escaped []int
	// swept: Sweep ran, and gave its leaf back (another process may be in
	// it since: a second Sweep must not touch it).
	swept atomic.Bool
}

// ExitInfo describes how a process ended.
type ExitInfo struct {
	Code     int  // exit status, -1 when killed by a signal
	Signaled bool // killed by a signal
	Signal   syscall.Signal
}

func (e ExitInfo) String() string {
	if e.Signaled {
		return "killed by " + signalName(e.Signal)
	}
	return fmt.Sprintf("exited with status %d", e.Code)
}

// Start starts the process in its own process group, with the streams of
// spec.Stdio, and waits for it in the background (Done closes when it has
// ended). The caller then starts reading its output (ReadOutput).
func Start(spec Spec) (*Process, error) {
	argv := spec.Argv
	if spec.Shell != "" {
		argv = []string{"/bin/sh", "-c", spec.Shell}
	}
	s := spec.Stdio
	if len(argv) == 0 {
		s.Close()
		return nil, errors.New("no command to run")
	}
	command := func(cg *leafCgroup) *exec.Cmd {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = spec.Dir
		cmd.Env = withOwner(append(spec.Env, "ORCH_ATTEMPT_TOKEN="+spec.Token))
		cmd.SysProcAttr = ownGroup()
		cg.attach(cmd.SysProcAttr)
		if s.childIn != nil { // else os/exec gives it /dev/null
			cmd.Stdin = s.childIn
		}
		cmd.Stdout, cmd.Stderr = s.childOut, s.childErr
		return cmd
	}
	cg := spec.Cgroup.leaf()
	cmd := command(cg)
	err := cmd.Start()
	if err != nil && cg != nil { // perhaps the kernel would not start it in the cgroup: try without
		cg.release()
		cg = nil
		cmd = command(nil)
		if err = cmd.Start(); err == nil { // it was the cgroup: the run goes without
			spec.Cgroup.failed()
		}
	}
	s.closeChild()
	if err != nil {
		cg.release()
		s.Close()
		return nil, startError(argv[0], spec.Dir, err)
	}
	if cg == nil { // with a cgroup, the leaf holds its descendants
		notePipes(spec.Token, s.out, s.err)
	}
	p := &Process{cmd: cmd, pid: cmd.Process.Pid, stdin: s.in, done: make(chan struct{}), grace: spec.Grace, io: s, cg: cg}
	p.output.Add(2)
	go p.wait()
	return p, nil
}

// PID is the process's ID, and its process group's.
func (p *Process) PID() int { return p.pid }

// Stdin is orch's end of the process's stdin, nil when its Stdio had none.
// A write to it may be given a deadline.
func (p *Process) Stdin() *os.File { return p.stdin }

// Done is closed once the process has exited and been waited for.
func (p *Process) Done() <-chan struct{} { return p.done }

// ReadOutput reads the process's stdout and stderr, each in its own
// goroutine, to the end of the stream (see readAll); WaitOutput returns
// then. Until it is called the pipes hold what the process writes.
func (p *Process) ReadOutput(stdout, stderr func(io.Reader)) {
	go func() { defer p.output.Done(); readAll(p.io.out, stdout) }()
	go func() { defer p.output.Done(); readAll(p.io.err, stderr) }()
}

// WaitOutput waits until the process's stdout and stderr have been read to
// the end: at the latest the grace period after it exited.
func (p *Process) WaitOutput() { p.output.Wait() }

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
func (p *Process) wait() {
	_ = p.cmd.Wait() // how it ended is in its ProcessState (Exit)
	deadline := time.Now().Add(p.grace)
	_ = p.io.out.SetReadDeadline(deadline)
	_ = p.io.err.SetReadDeadline(deadline)
	if p.stdin != nil { // a task the process never read
		_ = p.stdin.SetWriteDeadline(deadline)
	}
	close(p.done)
}

// Exit returns how the process ended; valid once Done is closed.
func (p *Process) Exit() ExitInfo {
	st := p.cmd.ProcessState
	if st == nil {
		return ExitInfo{Code: -1}
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ExitInfo{Code: -1, Signaled: true, Signal: ws.Signal()}
	}
	return ExitInfo{Code: st.ExitCode()}
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
