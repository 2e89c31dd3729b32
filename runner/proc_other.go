//go:build !linux

package runner

// Elsewhere than Linux there is no subreaper and no /proc: process groups
// still stop children; an escaped grandchild is not detected.
func becomeSubreaper()                                {}
func groupMembers(int) []int                          { return nil }
func escapedDescendants(token string, pgid int) []int { return nil }
func reapOrphans([]int)                               {}
