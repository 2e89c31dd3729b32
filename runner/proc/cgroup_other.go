//go:build !linux

package proc

import "syscall"

// RunCgroup: elsewhere than Linux there are no cgroups, a run goes without
// (see cgroup_linux.go), and every method is one on a nil cgroup.
type RunCgroup struct{}

type leafCgroup struct{}

func openRunCgroup(string) *RunCgroup             { return nil }
func (*RunCgroup) leaf() *leafCgroup              { return nil }
func (*RunCgroup) failed()                        {}
func (*RunCgroup) close() []int                   { return nil }
func (*RunCgroup) removeLeft(<-chan struct{}) int { return 0 }
func (*leafCgroup) attach(*syscall.SysProcAttr)   {}
func (*leafCgroup) members() []int                { return nil }
func (*leafCgroup) populated() bool               { return false }
func (*leafCgroup) signal(syscall.Signal)         {}
func (*leafCgroup) kill() bool                    { return true }
func (*leafCgroup) release()                      {}
func (*leafCgroup) reuse()                        {}
