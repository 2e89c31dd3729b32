package runner

// sweeper does nothing on Windows, where runs do not start (RunsProcesses);
// sweeper.go is the Unix one.
type sweeper struct {
	cgroup *runCgroup // always nil: no cgroups here
}

func newSweeper(*run) *sweeper { return &sweeper{} }
func (*sweeper) begin(string)  {}
func (*sweeper) end(string)    {}
func (*sweeper) start()        {}
func (*sweeper) stop()         {}
