package proc

import (
	"os"
	"strings"
	"sync"
)

// Without a cgroup, a descendant that cleared its environment (setsid
// env -i) and whose parent exited is reparented to orch with nothing that
// says which attempt it came from: the sweeps spare it while any attempt
// runs, since it may be a running attempt's. But it usually still holds
// what it inherited: its attempt's stdout and stderr pipes. So orch keeps
// the identity of every pipe it reads an agent's output from, with the
// attempt's token, and a sweep takes such an orphan for its attempt's: once
// that attempt has ended (it finished, or orch stop RUN CUE stopped its
// subtree) the orphan is killed at once, as at the run's end. One that
// closed its output as well is spared until no attempt runs.

// pipeTokens maps an output pipe (see pipeID) to the token of the attempt
// whose process writes to it.
var pipeTokens = struct {
	sync.Mutex
	m map[string]string
}{m: map[string]string{}}

// notePipes records the output pipes of a process started with token.
func notePipes(token string, files ...*os.File) {
	if token == "" || !pipesTraced {
		return
	}
	ids := make([]string, 0, len(files))
	for _, f := range files {
		if id := pipeID(f); id != "" {
			ids = append(ids, id)
		}
	}
	pipeTokens.Lock()
	for _, id := range ids {
		pipeTokens.m[id] = token
	}
	pipeTokens.Unlock()
}

// forgetPipes drops the pipes of run runID's attempts (the end of its last
// sweeper in this process).
func forgetPipes(runID string) {
	pipeTokens.Lock()
	for id, tok := range pipeTokens.m {
		if strings.HasPrefix(tok, runID+"/") {
			delete(pipeTokens.m, id)
		}
	}
	pipeTokens.Unlock()
}

// heldToken is the token of the attempt whose output pipe process pid holds,
// "" when it holds none orch knows.
func heldToken(pid int) string {
	held := heldPipes(pid)
	if len(held) == 0 {
		return ""
	}
	pipeTokens.Lock()
	defer pipeTokens.Unlock()
	for _, id := range held {
		if tok, ok := pipeTokens.m[id]; ok {
			return tok
		}
	}
	return ""
}
