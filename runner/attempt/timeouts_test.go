package attempt

import (
	"testing"
	"time"

	"github.com/orch-cli/orch/spec"
)

// An ACP agent's WARNING starts a coding CLI, which takes seconds to answer
// initialize: by default it gets DefaultACPStartTimeout, other agents
// DefaultAckTimeout; the cuelist's defaults.ack_timeout wins for both.
func TestAckTimeoutByProtocol(t *testing.T) {
	set := spec.Duration(2 * time.Second)
	for _, tc := range []struct {
		protocol string
		defaults spec.Duration
		want     time.Duration
	}{
		{"acp", spec.Duration(0), DefaultACPStartTimeout},
		{"jsonl", spec.Duration(0), DefaultAckTimeout},
		{"none", spec.Duration(0), DefaultAckTimeout},
		{"acp", set, 2 * time.Second},
		{"jsonl", set, 2 * time.Second},
	} {
		cl := &spec.Cuelist{}
		cl.Defaults.AckTimeout = tc.defaults
		if got := AckTimeout(cl, &spec.Agent{Protocol: tc.protocol}); got != tc.want {
			t.Errorf("%s agent, defaults.ack_timeout %v: got %v, want %v", tc.protocol, tc.defaults.D(), got, tc.want)
		}
	}
}
