//go:build temporal_e2e && linux

package temporal

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// patience bounds every wait of these tests: generous, for a loaded 2-core
// machine (a worker's loss is noticed by an activity's heartbeat timeout).
// Four such waits in a row stay under the 15 minutes CI gives the test.
const patience = 3 * time.Minute

// repoRoot is the orch checkout this package is in.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "cmd", "orch")); err != nil {
		t.Fatalf("not an orch checkout: %s", root)
	}
	return root
}

// buildOrch builds orch and orch-temporal side by side into dir/bin (orch
// finds orch-temporal next to itself).
func buildOrch(t *testing.T, root, dir string) (orch string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(root, "cmd", "orch-temporal")); err != nil {
		t.Skip("cmd/orch-temporal is not in this tree: the Temporal engine is not merged yet")
	}
	bin := filepath.Join(dir, "bin")
	for _, pkg := range []string{"./cmd/orch", "./cmd/orch-temporal"} {
		cmd := exec.Command("go", "build", "-o", bin+string(os.PathSeparator), pkg)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	return filepath.Join(bin, "orch")
}

// devServer is a Temporal dev server run by scripts/temporal-dev.sh, or one
// found at $ORCH_TEMPORAL_ADDRESS (which the test may not restart).
type devServer struct {
	script, dir, port string
	args              []string // temporal-dev.sh start's, beyond the port and dir
	addr              string
	owned             bool
}

func startDevServer(t *testing.T, root, dir string, args ...string) *devServer {
	t.Helper()
	if addr := os.Getenv("ORCH_TEMPORAL_ADDRESS"); addr != "" {
		return &devServer{addr: addr}
	}
	s := &devServer{
		script: filepath.Join(root, "scripts", "temporal-dev.sh"),
		dir:    filepath.Join(dir, "temporal"),
		port:   freePort(t),
		args:   args,
		owned:  true,
	}
	s.start(t)
	t.Cleanup(func() { s.stop(t) })
	return s
}

func (s *devServer) start(t *testing.T) {
	t.Helper()
	// The script builds the CLI first when it is not cached (minutes).
	cmd := exec.Command(s.script, append([]string{"start", "--port", s.port, "--dir", s.dir}, s.args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("temporal-dev.sh start: %v\n%s", err, stderr.Bytes())
	}
	s.addr = strings.TrimSpace(string(out))
}

func (s *devServer) stop(t *testing.T) {
	t.Helper()
	if out, err := exec.Command(s.script, "stop", "--dir", s.dir).CombinedOutput(); err != nil {
		t.Errorf("temporal-dev.sh stop: %v\n%s", err, out)
	}
}

// restart stops the server and starts it again on the same port and the
// same database file: every workflow's history must survive.
func (s *devServer) restart(t *testing.T) {
	t.Helper()
	if !s.owned {
		t.Logf("the server at %s is not this test's: not restarted", s.addr)
		return
	}
	s.stop(t)
	s.start(t)
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// proc is a long-lived process of the test (a worker, orch run), in its own
// process group, its output in a log file printed when the test fails.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

func startProc(t *testing.T, dir, name string, env []string, wd string, argv ...string) *proc {
	t.Helper()
	p := &proc{name: name, log: filepath.Join(dir, name+".log"), done: make(chan struct{})}
	f, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(argv[0], argv[1:]...)
	p.cmd.Dir, p.cmd.Env, p.cmd.Stdout, p.cmd.Stderr = wd, env, f, f
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		f.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		// Whatever is left of the group: the test is over.
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
		if t.Failed() {
			out, _ := os.ReadFile(p.log)
			t.Logf("--- %s (%s):\n%s", name, strings.Join(argv, " "), out)
		}
	})
	return p
}

// wait returns the process's exit code, or fails the test after patience.
func (p *proc) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(patience):
		t.Fatalf("%s still running after %s", p.name, patience)
	}
	var exit *exec.ExitError
	if p.err != nil && !errors.As(p.err, &exit) {
		t.Fatalf("%s: %v", p.name, p.err)
	}
	return p.cmd.ProcessState.ExitCode()
}

// ppid is the parent of pid, from /proc (0 when pid is gone).
func ppid(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// pid (comm) state ppid ...: comm may hold spaces and parentheses.
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(fields[1])
	return n
}

// ancestry is pid's chain of parents up to (not including) the first pid in
// stop, and that one; nil if pid does not descend from any of them.
func ancestry(pid int, stop map[int]bool) (chain []int, top int) {
	for p := ppid(pid); p > 1; p = ppid(p) {
		if stop[p] {
			return chain, p
		}
		chain = append(chain, p)
	}
	return nil, 0
}

func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	// A zombie is dead: its parent has not reaped it yet.
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(fields) > 0 && fields[0] != "Z"
}

// processesIn lists the live processes whose working directory is under dir
// (the agents of the test's project run there).
func processesIn(dir string) []string {
	var found []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		wd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
		if err != nil || !strings.HasPrefix(wd, dir) || !alive(pid) {
			continue
		}
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		found = append(found, fmt.Sprintf("pid %d in %s: %s", pid, wd, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
	}
	return found
}

// orchIn runs orch commands in dir with env: combined output and exit code.
func orchIn(t *testing.T, orch, dir string, env []string) orchRunner {
	return func(args ...string) (string, int) {
		cmd := exec.Command(orch, args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if _, ok := err.(*exec.ExitError); err != nil && !ok {
			t.Fatalf("orch %s: %v", strings.Join(args, " "), err)
		}
		return string(out), cmd.ProcessState.ExitCode()
	}
}

// eventually polls cond until it holds, or fails the test after patience.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %s", patience, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// writeFiles writes files (by their path below dir), executable: some are
// agents' scripts.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}
