package record

import (
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
