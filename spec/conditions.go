package spec

import "strings"

// A cue's conditions are checked just before its GO. Each is one of:
//   - all_dependencies_complete or approval_received (BuiltinCondition);
//   - CUE.KEY, an output of cue CUE, which the cue must depend on (directly
//     or not), so that CUE has completed and its outputs are known;
//   - any other name: a blackboard key, set and truthy.

// BuiltinCondition reports whether cond is one of the named conditions
// rather than a key.
func BuiltinCondition(cond string) bool {
	return cond == "all_dependencies_complete" || cond == "approval_received"
}

// OutputCondition splits a condition that names a cue's output
// ("CUE-100.tests_passed") into the cue and the key: the longest part before
// a dot that isCue says is a cue of the cuelist (cue ids and keys may hold
// dots). ok is false for a condition on a blackboard key.
func OutputCondition(cond string, isCue func(id string) bool) (cue, key string, ok bool) {
	for i := strings.LastIndexByte(cond, '.'); i > 0; i = strings.LastIndexByte(cond[:i], '.') {
		if i < len(cond)-1 && isCue(cond[:i]) {
			return cond[:i], cond[i+1:], true
		}
	}
	return "", "", false
}
