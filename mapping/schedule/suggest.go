package schedule

// suggest returns the choice closest to word when it is near enough to be
// a typo (one edit for words of up to four letters, two for longer ones),
// or "" when none is, or when two choices are equally close.
func suggest(word string, choices []string) string {
	limit := 2
	if len([]rune(word)) <= 4 {
		limit = 1
	}
	best, bestDist, tie := "", limit+1, false
	for _, c := range choices {
		d := editDistance(word, c)
		switch {
		case d < bestDist:
			best, bestDist, tie = c, d, false
		case d == bestDist && c != best:
			tie = true
		}
	}
	if tie || bestDist == 0 {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, counted in
// runes, with a transposition of two neighbours counted as one edit.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
