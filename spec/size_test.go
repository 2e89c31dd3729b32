package spec

import "testing"

func TestParseSize(t *testing.T) {
	for in, want := range map[string]Size{"10MiB": 10 << 20, "512KiB": 512 << 10, "1GiB": 1 << 30, "4096": 4096, "4096B": 4096,
		"1.5MiB": 3 << 19, "100KB": 100000, "2 MB": 2000000} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "10 megs", "-1MiB", "0", "0.1B", "1TiB", "2048GiB", "10mib", "MiB"} {
		if got, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", in, got)
		}
	}
	if s := Size(10 << 20).String(); s != "10MiB" {
		t.Errorf("String() = %s", s)
	}
}
