package mcpserver

import (
	"testing"

	"github.com/orch-cli/orch/internal/initcost"
)

// TestInitInfersNoSchema: the tools' input schemas are inferred at first
// use; every orch command links this package and most never serve MCP.
func TestInitInfersNoSchema(t *testing.T) {
	if n := initcost.Bytes(t, "github.com/orch-cli/orch/mcpserver"); n > 4096 {
		t.Errorf("the package's init allocates %d bytes, want at most 4096 (the tools' schemas inferred at first use)", n)
	}
}
