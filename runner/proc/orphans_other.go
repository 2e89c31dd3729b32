//go:build !linux && !darwin

package proc

// Elsewhere than Linux orch is no subreaper and there is no /proc: no
// orphan comes back to orch to be found (see orphans_linux.go).
func orphans() map[int]string       { return nil }
func killTrees([]int) map[int][]int { return nil }
