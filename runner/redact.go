package runner

import (
	"os"
	"sort"
	"strings"

	"github.com/orch-cli/orch/planner"
)

// redactor removes secret values (from the environment variables agents
// declare as secrets) from everything orch records.
type redactor struct{ r *strings.Replacer }

func newRedactor(p *planner.Plan) *redactor {
	var secrets []string
	for _, a := range p.Agents {
		for _, name := range a.Secrets {
			if v := os.Getenv(name); len(v) >= 4 { // shorter values would redact ordinary text
				secrets = append(secrets, v)
			}
		}
	}
	if len(secrets) == 0 {
		return &redactor{}
	}
	sort.Slice(secrets, func(i, j int) bool { return len(secrets[i]) > len(secrets[j]) }) // longest first
	var pairs []string
	for _, s := range secrets {
		pairs = append(pairs, s, "[redacted]")
	}
	return &redactor{r: strings.NewReplacer(pairs...)}
}

func (d *redactor) text(s string) string {
	if d == nil || d.r == nil {
		return s
	}
	return d.r.Replace(s)
}

// value redacts every string inside a JSON-like value.
func (d *redactor) value(v any) map[string]any {
	m, _ := d.any(v).(map[string]any)
	return m
}

func (d *redactor) any(v any) any {
	if d == nil || d.r == nil {
		return v
	}
	switch v := v.(type) {
	case string:
		return d.r.Replace(v)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = d.any(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = d.any(x)
		}
		return out
	}
	return v
}
