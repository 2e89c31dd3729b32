//go:build !linux

package runner

import "syscall"

// Elsewhere than Linux there are no cgroups: a run goes without (see
// cgroup_linux.go), and every method is one on a nil cgroup.
type runCgroup struct{}

type procCgroup struct{}

func openRunCgroup(string) *runCgroup           { return nil }
func (*runCgroup) leaf() *procCgroup            { return nil }
func (*runCgroup) failed()                      {}
func (*runCgroup) close() []int                 { return nil }
func (*procCgroup) attach(*syscall.SysProcAttr) {}
func (*procCgroup) members() []int              { return nil }
func (*procCgroup) populated() bool             { return false }
func (*procCgroup) signal(syscall.Signal)       {}
func (*procCgroup) kill() bool                  { return true }
func (*procCgroup) release()                    {}
