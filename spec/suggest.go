package spec

// closest returns the candidate nearest to s by edit distance when it is near
// enough to be a plausible typo (up to a third of the word, at most 3), else "".
func closest(s string, candidates []string) string {
	limit := min(max(len(s)/3, 1), 3)
	best, bestDist := "", limit+1
	for _, c := range candidates {
		if d := editDistance(s, c, limit); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the optimal-string-alignment distance between a and b (a
// transposition such as "agnet" for "agent" is one edit), or limit+1 once it is
// certain to exceed limit.
func editDistance(a, b string, limit int) int {
	ra, rb := []rune(a), []rune(b)
	if d := len(ra) - len(rb); d > limit || -d > limit {
		return limit + 1
	}
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
			rowMin = min(rowMin, cur[j])
		}
		if rowMin > limit {
			return limit + 1
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return min(prev[len(rb)], limit+1)
}
