package temporal

import (
	"time"

	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
)

// newEnv is the SDK's test environment for a shared, loaded machine: its
// deadlock detector fails the workflow when a workflow task does not yield
// within 1 s of wall-clock time, which a task of orch.run (the plan built,
// a burst of decisions) overran at a load of 16 on two cores; it gets 30 s
// here. The test still ends at its test timeout.
func newEnv() *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: 30 * time.Second})
	env.SetTestTimeout(2 * time.Minute)
	return env
}
