package proc

import (
	"strings"
	"sync"
	"time"
)

// Sweeper keeps a run's processes from outliving it. It makes the run's
// cgroup where it can (Cgroup; each process started in it gets a leaf, and
// Process.Sweep empties the leaf when the process ends), and it finds the
// processes' descendants that outlived their process and were reparented
// to orch, the subreaper (on macOS to launchd): escapees of the process
// group (setsid), with or without an attempt token, and the children of any
// process that exited. It looks every second while the run goes on and
// again and again at its end until none is left, so none outlives the run.
// Looking once a second rather than after every attempt keeps /proc reads
// off each cue's path. With a cgroup the sweeps are the second line.
type Sweeper struct {
	runID  string
	killed func(Orphan)
	cgroup *RunCgroup // the run's cgroup, nil without
	quit   chan struct{}
	done   chan struct{}
	// mine counts the tokens this sweeper marked live (Begin) and not yet
	// over (End): Stop forgets those, not the run's others — one process
	// may hold several sweepers of a run at once (a worker's pool of the
	// run closing while a new one starts), each with its own attempts.
	// Guarded by liveTokens.
	mine map[string]int
}

// runSweepers counts the sweepers of each run started and not yet stopped
// in this process: the output pipes of a run's attempts (pipetokens.go) are
// forgotten when its last one stops, since the others' attempts may still
// be told by them. Guarded by liveTokens.
var runSweepers = map[string]int{}

// Orphan is a process a sweep found and killed, with its descendants.
type Orphan struct {
	PID int
	// Token is its ORCH_ATTEMPT_TOKEN (see Spec.Token), "" when it had none:
	// its environment was cleared (env -i).
	Token       string
	Descendants []int // killed with it
}

// liveTokens are the attempt tokens of attempts running in this process,
// of every run, each counted once per Begin not yet ended: their
// processes, and orphans carrying their token, are the attempt's to
// manage. An orphan with no token at all (its environment was cleared)
// cannot be told apart, so it is spared while any attempt runs.
var liveTokens = struct {
	sync.Mutex
	m map[string]int
}{m: map[string]int{}}

// NewSweeper makes the sweeper of run runID. killed is told of each orphan
// a sweep killed (from the sweeper's goroutine, or from Stop's).
func NewSweeper(runID string, killed func(Orphan)) *Sweeper {
	return &Sweeper{runID: runID, killed: killed, quit: make(chan struct{}), done: make(chan struct{}), mine: map[string]int{}}
}

// Begin marks an attempt's token live before anything with it is started:
// a process carrying it is not an escapee while the attempt runs.
func (s *Sweeper) Begin(token string) {
	liveTokens.Lock()
	liveTokens.m[token]++
	s.mine[token]++
	liveTokens.Unlock()
}

// End marks the attempt over: whatever still carries its token and is not
// in its (already emptied) process group has escaped.
func (s *Sweeper) End(token string) {
	liveTokens.Lock()
	if s.mine[token] > 0 { // once per Begin: a second End of it is no one else's
		s.forget(token, 1)
	}
	liveTokens.Unlock()
}

// forget takes n of this sweeper's marks of token off. The caller holds
// liveTokens.
func (s *Sweeper) forget(token string, n int) {
	if s.mine[token] -= n; s.mine[token] <= 0 {
		delete(s.mine, token)
	}
	if liveTokens.m[token] -= n; liveTokens.m[token] <= 0 {
		delete(liveTokens.m, token)
	}
}

// Cgroup is the run's cgroup for Spec.Cgroup, nil when it has none (or
// before Start).
func (s *Sweeper) Cgroup() *RunCgroup { return s.cgroup }

// Start makes the run's cgroup, if it can, and starts the periodic sweeps;
// the first removes the empty cgroups that orch processes killed before
// their end left next to it (see RunCgroup.removeLeft). Call it before the
// run starts any process.
func (s *Sweeper) Start() {
	liveTokens.Lock()
	runSweepers[s.runID]++
	liveTokens.Unlock()
	s.cgroup = openRunCgroup(s.runID)
	go s.loop()
}

func (s *Sweeper) loop() {
	defer close(s.done)
	// Here, off the run's path: the run's first processes need not wait.
	s.cgroup.removeLeft(s.quit)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-t.C:
			s.sweep()
		}
	}
}

// Stop ends the periodic sweeps and sweeps until nothing is left, sparing
// nothing of this sweeper's attempts (another sweeper's of the same run,
// still live, are spared); then it kills what is left in the run's cgroup and
// removes it. It returns the pids it killed in the cgroup.
func (s *Sweeper) Stop() (inCgroup []int) {
	close(s.quit)
	<-s.done
	liveTokens.Lock()
	for tok, n := range s.mine {
		s.forget(tok, n)
	}
	runSweepers[s.runID]--
	last := runSweepers[s.runID] <= 0
	if last {
		delete(runSweepers, s.runID)
	}
	liveTokens.Unlock()
	for i := 0; i < 20 && s.sweep(); i++ {
	}
	if last {
		forgetPipes(s.runID)
	}
	return s.cgroup.close()
}

// ended says whether token is of one of this run's attempts that has
// ended. The caller holds liveTokens.
func (s *Sweeper) ended(token string) bool {
	return strings.HasPrefix(token, s.runID+"/") && liveTokens.m[token] == 0
}

// sweep kills the orphans that belong to this run's ended attempts (by
// their token, or by the output pipe they hold), and those without a token
// when no attempt runs, each with all its descendants, and says so
// (killed). It reports whether it found any.
func (s *Sweeper) sweep() bool {
	found := orphans()
	if len(found) == 0 {
		return false
	}
	liveTokens.Lock()
	idle := len(liveTokens.m) == 0
	var roots []int
	var unknown []int // no token, while attempts run: whose?
	for pid, token := range found {
		switch {
		case token == "" && idle, s.ended(token):
			roots = append(roots, pid)
		case token == "":
			unknown = append(unknown, pid)
		}
	}
	liveTokens.Unlock()
	for _, pid := range unknown { // the output pipe it holds may say (pipetokens.go)
		if token := heldToken(pid); token != "" {
			liveTokens.Lock()
			if s.ended(token) {
				roots = append(roots, pid)
			}
			liveTokens.Unlock()
		}
	}
	if len(roots) == 0 {
		return false
	}
	for root, pids := range killTrees(roots) {
		if len(pids) == 0 || pids[0] != root {
			continue // it did not die: say nothing untrue
		}
		s.killed(Orphan{PID: root, Token: found[root], Descendants: pids[1:]})
	}
	return true
}
