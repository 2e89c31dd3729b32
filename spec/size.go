package spec

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
)

// Size is a number of bytes written as a string in YAML: "512KiB", "10MiB",
// "1GiB", "100KB", "4096" or "4096B" (KiB, MiB and GiB are powers of 1024;
// KB, MB and GB of 1000).
type Size int64

var sizeSyntax = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?) ?(B|KiB|MiB|GiB|KB|MB|GB)?$`)

var sizeUnits = map[string]float64{"": 1, "B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "KB": 1e3, "MB": 1e6, "GB": 1e9}

// ParseSize reads a size; it must be positive and below 1 TiB.
func ParseSize(s string) (Size, error) {
	m := sizeSyntax.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("%q is not a size such as 512KiB or 10MiB", s)
	}
	n, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0, err
	}
	b := n * sizeUnits[m[2]]
	if b < 1 || b >= 1<<40 {
		return 0, fmt.Errorf("%q is out of range (1 byte to 1 TiB)", s)
	}
	return Size(b), nil
}

func (z *Size) UnmarshalJSON(b []byte) error {
	var s string
	_ = json.Unmarshal(b, &s)
	// A bad size has already been reported by the schema's size format (see
	// Duration.UnmarshalJSON).
	v, _ := ParseSize(s)
	*z = v
	return nil
}

func (z Size) MarshalJSON() ([]byte, error) { return json.Marshal(z.String()) }

// String writes the size in the largest binary unit that divides it.
func (z Size) String() string {
	switch {
	case z >= 1<<30 && z%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", z>>30)
	case z >= 1<<20 && z%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", z>>20)
	case z >= 1<<10 && z%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", z>>10)
	}
	return fmt.Sprintf("%dB", int64(z))
}
