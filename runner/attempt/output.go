package attempt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/orch-cli/orch/spec"
)

// MaxOutputFile bounds what an agent may write to ORCH_OUTPUT.
const MaxOutputFile = MaxLine

// ParseOutput reads ORCH_OUTPUT: one JSON object, or key=value lines
// (with GitHub's key<<DELIMITER heredoc for values over several lines).
func ParseOutput(data []byte) (map[string]any, error) {
	if len(data) > MaxOutputFile {
		return nil, fmt.Errorf("ORCH_OUTPUT is larger than %d bytes", MaxOutputFile)
	}
	trimmed := bytes.TrimSpace(data)
	out := map[string]any{}
	if len(trimmed) == 0 {
		return out, nil
	}
	if trimmed[0] == '{' {
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		if err := dec.Decode(&out); err != nil {
			return nil, fmt.Errorf("ORCH_OUTPUT is not a JSON object: %v", err)
		}
		if dec.More() {
			return nil, errors.New("ORCH_OUTPUT has text after its JSON object")
		}
		return out, nil
	}
	lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if strings.TrimSpace(line) == "" {
			continue
		}
		if k, delim, ok := strings.Cut(line, "<<"); ok && !strings.Contains(k, "=") {
			var body []string
			j := i + 1
			for ; j < len(lines) && lines[j] != delim; j++ {
				body = append(body, lines[j])
			}
			if j == len(lines) {
				return nil, fmt.Errorf("ORCH_OUTPUT line %d: no closing %q for %s", i+1, delim, k)
			}
			out[strings.TrimSpace(k)] = strings.Join(body, "\n")
			i = j
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("ORCH_OUTPUT line %d: expected key=value, got %q", i+1, Truncate(line, 80))
		}
		out[strings.TrimSpace(k)] = v
	}
	return out, nil
}

// ReadOutputFile reads and parses what an agent wrote to its ORCH_OUTPUT
// file (ParseOutput): no outputs when it wrote none (the agent creates
// the file when it writes an output).
func ReadOutputFile(path string) (map[string]any, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]any{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, int64(MaxOutputFile)+1))
	if err != nil {
		return nil, err
	}
	return ParseOutput(data)
}

// CheckContract fails a successful attempt of agent that did not deliver
// every key the agent provides.
func CheckContract(agent *spec.Agent, outputs map[string]any) *Failure {
	var missing []string
	for _, k := range agent.Provides {
		if _, ok := outputs[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	sort.Strings(missing)
	return Failf("contract", "contract violation: did not provide %s", strings.Join(missing, ", "))
}

// ReplyOutputs are a coding agent's outputs from its reply: text, and the
// other keys it provides from the reply's last JSON object.
func ReplyOutputs(agent *spec.Agent, text string) map[string]any {
	out := map[string]any{"text": text}
	if keys := jsonKeys(agent.Provides); len(keys) > 0 {
		obj := lastJSONObject(text)
		for _, k := range keys {
			if v, ok := obj[k]; ok {
				out[k] = v
			}
		}
	}
	return out
}

// lastJSONObject is the last top-level JSON object in text (a reply often
// ends with one, perhaps in a code fence), or nil.
func lastJSONObject(text string) map[string]any {
	var last map[string]any
	b := []byte(text)
	for i := 0; i < len(b); {
		j := bytes.IndexByte(b[i:], '{')
		if j < 0 {
			break
		}
		i += j
		dec := json.NewDecoder(bytes.NewReader(b[i:]))
		var obj map[string]any
		if dec.Decode(&obj) == nil {
			last = obj
			i += int(dec.InputOffset())
			continue
		}
		i++
	}
	return last
}

// Truncate cuts s after n bytes, marking the cut with "...".
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
