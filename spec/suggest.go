package spec

import "github.com/orch-cli/orch/internal/editdist"

// closest returns the candidate nearest to s by edit distance when it is near
// enough to be a plausible typo (up to a third of the word, at most 3), else "".
func closest(s string, candidates []string) string {
	limit := min(max(len(s)/3, 1), 3)
	best, bestDist := "", limit+1
	for _, c := range candidates {
		if d := editdist.Distance(s, c, limit); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// Closest is closest for other packages: the candidate a typo of s most
// likely meant, or "".
func Closest(s string, candidates []string) string { return closest(s, candidates) }
