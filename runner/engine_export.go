package runner

import (
	"github.com/orch-cli/orch/runner/record"
	"github.com/orch-cli/orch/spec"
)

// What another engine (engine/temporal) needs to run one attempt of a plain
// agent the way this runner does, without the rest of the runner: the task's
// input variables, the ORCH_OUTPUT file's parsing, the blackboard snapshot
// and the provides contract.

// MaxOutputFile is the largest ORCH_OUTPUT file read.
const MaxOutputFile = maxOutputFile

// InputVars are the ORCH_INPUT_<NAME> variables of a plain agent's task
// (large values go to files in dir).
func InputVars(t *Task, dir string) ([]string, error) { return inputVars(t, dir) }

// ParseOutputFile parses what an agent wrote to ORCH_OUTPUT.
func ParseOutputFile(data []byte) (map[string]any, error) { return parseOutputFile(data) }

// WithBoard fills the task's blackboard snapshot from entries.
func WithBoard(t *Task, entries map[string]record.BlackboardEntry) *Task {
	return withBoard(t, entries, nil)
}

// Scalar is an environment variable's text for a scalar value.
func Scalar(v any) string { return spec.EnvValue(v) }

// ContractFailure returns why outputs break the agent's provides contract
// ("" when they do not).
func ContractFailure(a *spec.Agent, outputs map[string]any) string {
	if f := (&attempt{agent: a}).checkContract(outputs); f != nil {
		return f.reason
	}
	return ""
}
