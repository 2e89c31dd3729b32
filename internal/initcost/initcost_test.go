package initcost

import "testing"

func TestParse(t *testing.T) {
	out := []byte("init internal/bytealg @0.008 ms, 0 ms clock, 0 bytes, 0 allocs\n" +
		"init github.com/x/y @1.2 ms, 0.27 ms clock, 132152 bytes, 1402 allocs\n" +
		"init github.com/x/yz @1.5 ms, 0.01 ms clock, 64 bytes, 1 allocs\n")
	for pkg, want := range map[string]int{"github.com/x/y": 132152, "github.com/x/yz": 64, "github.com/x/none": 0} {
		if got, err := parse(out, pkg); err != nil || got != want {
			t.Errorf("parse(%s) = %d, %v; want %d", pkg, got, err, want)
		}
	}
	if _, err := parse([]byte("PASS\n"), "github.com/x/y"); err == nil {
		t.Error("output without an init trace was read as an init of nothing")
	}
}

// TestBytes: this package's init allocates (allocatedAtInit, below), and
// the test binary reports it.
func TestBytes(t *testing.T) {
	if n := Bytes(t, "github.com/orch-cli/orch/internal/initcost"); n < 1<<16 {
		t.Errorf("%d bytes counted for an init that allocates 64 KiB", n)
	}
}

var allocatedAtInit = make([]byte, 1<<16)
