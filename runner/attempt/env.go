package attempt

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/orch-cli/orch/spec"
)

// Linux refuses to start a process with one environment string over 128 KiB
// (E2BIG), and bounds the environment and arguments together (a quarter of
// the stack limit, often 2 MiB). So a scalar input goes in ORCH_INPUT_<NAME>
// only up to maxEnvInput bytes, and only while the ORCH_INPUT_* variables
// stay within maxEnvInputs in all; any other is written to a file in the
// attempt's input directory, named by ORCH_INPUT_<NAME>_FILE.
const (
	maxEnvInput  = 32 << 10
	maxEnvInputs = 256 << 10
)

// InputVars are the ORCH_INPUT_<NAME> (or ORCH_INPUT_<NAME>_FILE) variables
// of a plain agent's task: its scalar inputs, so that a shell agent needs no
// JSON parser. Files are written in dir, created when one is needed; remove
// deletes it then, and is a no-op otherwise (most tasks need no file: their
// attempts spend no system call on a directory that was never made). Call
// remove even when err is not nil.
func InputVars(t *Task, dir string) (vars []string, remove func(), err error) {
	made := false
	remove = func() {
		if made {
			_ = os.RemoveAll(dir)
		}
	}
	write := func(name string, data []byte) (string, error) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", err
		}
		made = true
		path := filepath.Join(dir, name)
		return path, os.WriteFile(path, data, 0o600)
	}
	names := make([]string, 0, len(t.Inputs))
	for k := range t.Inputs {
		names = append(names, k)
	}
	sort.Strings(names)
	total := 0
	if t.Item != nil { // a fan-out's item, as JSON
		if len(t.Item) <= maxEnvInput {
			total += len("ORCH_ITEM") + len(t.Item)
			vars = append(vars, "ORCH_ITEM="+string(t.Item))
		} else {
			path, err := write("ORCH_ITEM", t.Item)
			if err != nil {
				return nil, remove, err
			}
			vars = append(vars, "ORCH_ITEM_FILE="+path)
		}
	}
	for _, k := range names {
		switch v := t.Inputs[k].(type) {
		case string, bool, float64, int64, int, json.Number:
			name, value := spec.InputVar(k), spec.EnvValue(v)
			if len(value) <= maxEnvInput && total+len(name)+len(value) <= maxEnvInputs {
				total += len(name) + len(value)
				vars = append(vars, name+"="+value)
				continue
			}
			path, err := write(strings.TrimPrefix(name, "ORCH_INPUT_"), []byte(value))
			if err != nil {
				return nil, remove, err
			}
			vars = append(vars, name+"_FILE="+path)
		}
	}
	return vars, remove, nil
}

// SafeName is an id as a part of a file name or an attempt token: no path
// separator.
func SafeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == 0 {
			return '_'
		}
		return r
	}, s)
}

// Environ is the environment an agent's processes start from: environ
// (orch's own) and the agent's env, sorted by name. Values never reach a
// command line.
func Environ(environ []string, vars map[string]any) []string {
	keys := make([]string, 0, len(vars))
	for k := range vars {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		environ = append(environ, k+"="+spec.EnvValue(vars[k]))
	}
	return environ
}

// OrchVars are the ORCH_* variables that say which attempt a process is
// of, and where the run is recorded (db) and its project (root).
func OrchVars(runID, cue, agent string, number int, db, root string) []string {
	return []string{"ORCH_RUN_ID=" + runID, "ORCH_CUE_ID=" + cue, "ORCH_AGENT_ID=" + agent,
		"ORCH_ATTEMPT=" + strconv.Itoa(number), "ORCH_DB=" + db, "ORCH_ROOT=" + root}
}
