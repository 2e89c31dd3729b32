package record

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// FormatUSD is an amount of US dollars as orch prints money: to the cent
// ($0.03, $12.50), or to 4 significant digits under a cent ($0.004321).
// JSON keeps the number as reported.
func FormatUSD(usd float64) string {
	if usd > 0 && usd < 0.01 {
		s := strconv.FormatFloat(usd, 'f', 3-int(math.Floor(math.Log10(usd))), 64)
		if r, _ := strconv.ParseFloat(s, 64); r < 0.01 { // not a cent once rounded
			return "$" + strings.TrimRight(s, "0")
		}
	}
	return "$" + strconv.FormatFloat(usd, 'f', 2, 64)
}

// HumanBytes writes n in B, KiB, MiB or GiB with one decimal.
func HumanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// Plural writes "1 line", "912,345 lines".
func Plural(n int64, what string) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if n == 1 {
		return s + " " + what
	}
	return s + " " + what + "s"
}
