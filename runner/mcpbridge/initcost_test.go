package mcpbridge

import (
	"testing"

	"github.com/orch-cli/orch/internal/initcost"
)

// TestInitInfersNoSchema: the catalog's input schemas are inferred at first
// use; every orch command links this package and most runs never serve a
// tool.
func TestInitInfersNoSchema(t *testing.T) {
	if n := initcost.Bytes(t, "github.com/orch-cli/orch/runner/mcpbridge"); n > 4096 {
		t.Errorf("the package's init allocates %d bytes, want at most 4096 (the catalog's schemas inferred at first use)", n)
	}
}
