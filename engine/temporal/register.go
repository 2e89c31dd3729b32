package temporal

import (
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/workflow"
)

// Registry is what a Temporal worker (or the SDK's test environment)
// registers workflows and activities with.
type Registry interface {
	WorkflowRegistry
	RegisterActivityWithOptions(a interface{}, options activity.RegisterOptions)
}

// WorkflowRegistry is what registers workflows (a replayer too).
type WorkflowRegistry interface {
	RegisterWorkflowWithOptions(w interface{}, options workflow.RegisterOptions)
}

// RegisterWorkflow registers orch.run.
func RegisterWorkflow(r WorkflowRegistry) {
	r.RegisterWorkflowWithOptions(Run, workflow.RegisterOptions{Name: WorkflowName})
}

// RegisterActivities registers the activities a worker runs.
func RegisterActivities(r Registry, a *Activities) {
	r.RegisterActivityWithOptions(a.Plan, activity.RegisterOptions{Name: ActivityPlan})
	r.RegisterActivityWithOptions(a.Warning, activity.RegisterOptions{Name: ActivityWarning})
	r.RegisterActivityWithOptions(a.Standby, activity.RegisterOptions{Name: ActivityStandby})
	r.RegisterActivityWithOptions(a.Go, activity.RegisterOptions{Name: ActivityGo})
	r.RegisterActivityWithOptions(a.Result, activity.RegisterOptions{Name: ActivityResult})
	r.RegisterActivityWithOptions(a.Merge, activity.RegisterOptions{Name: ActivityMerge})
	r.RegisterActivityWithOptions(a.MergeDrop, activity.RegisterOptions{Name: ActivityMergeDrop})
}
