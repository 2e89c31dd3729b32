package protocols

import (
	"testing"

	"github.com/orch-cli/orch/internal/initcost"
)

// TestInitBuildsNoRegistry: the registry is read from the table at first
// use; every orch command links this package and most never use it.
func TestInitBuildsNoRegistry(t *testing.T) {
	if n := initcost.Bytes(t, "github.com/orch-cli/orch/protocols"); n > 4096 {
		t.Errorf("the package's init allocates %d bytes, want at most 4096 (the registry built at first use)", n)
	}
}
