// Package redact masks secrets in everything orch records or prints: the
// values of secret-looking environment variables and of declared secrets
// become [redacted:NAME], which a run continued later puts back from its
// own environment.
package redact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/orch-cli/orch/planner"
	"github.com/orch-cli/orch/spec"
)

// What counts as a secret (README, "Secrets"): the value of an environment
// variable whose name says it is one (see SecretName), of 8 characters or
// more; the value of a variable declared in an agent's secrets (or listed
// in ORCH_SECRETS, which orch gives its agents), of 4 or more. Each line of
// a multi-line secret (a PEM key) is a secret of its own when it has 8
// characters or more, so that a log written line by line is masked too.
const (
	minSecret     = 4
	minNamedValue = 8
	minSecretLine = 8
)

// SecretsVar is the variable that lists, for orch bb set inside an agent,
// the names its agents declared as secrets (names only, never values).
const SecretsVar = "ORCH_SECRETS"

// secretWords are the parts of a variable's name that make its value a secret.
var secretWords = []string{"TOKEN", "SECRET", "KEY", "PASSWORD", "PASSWD", "CREDENTIAL", "PRIVATE"}

// SecretName reports whether an environment variable's name says it holds a
// secret: it contains TOKEN, SECRET, KEY, PASSWORD, PASSWD, CREDENTIAL or
// PRIVATE, in any case (GITHUB_TOKEN, aws_secret_access_key, API_KEY).
func SecretName(name string) bool {
	up := strings.ToUpper(name)
	if up == SecretsVar {
		return false // it holds names, not values
	}
	for _, w := range secretWords {
		if strings.Contains(up, w) {
			return true
		}
	}
	return false
}

// Redactor masks secret values in everything orch records or prints. A
// secret becomes [redacted:NAME] (a line of one, [redacted:NAME line N]),
// so that a reader knows what was there and a run continued later (orch go,
// orch resume) can put the value back from its own environment (Restore).
type Redactor struct {
	mask     *strings.Replacer // secret (and its JSON-escaped forms) -> marker
	restore  *strings.Replacer // marker -> secret
	declared []string          // the names declared secrets (see SecretsVar)
}

// NewRedactor finds the secrets in environ (NAME=VALUE entries): the values
// of secret-looking names, of the names in declared, and of those listed in
// environ's ORCH_SECRETS.
func New(environ []string, declared []string) *Redactor {
	vars := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[k] = v
		}
	}
	isDeclared := map[string]bool{}
	for _, n := range declared {
		isDeclared[n] = true
	}
	for _, n := range strings.Split(vars[SecretsVar], ",") {
		isDeclared[strings.TrimSpace(n)] = true
	}
	names := make([]string, 0, len(vars))
	for k := range vars {
		names = append(names, k)
	}
	sort.Strings(names)            // a value held by two variables is named after the first
	secrets := map[string]string{} // value -> marker
	add := func(value, marker string) {
		if _, seen := secrets[value]; !seen {
			secrets[value] = marker
		}
	}
	for _, k := range names {
		v := vars[k]
		switch {
		case isDeclared[k] && len(v) >= minSecret:
		case SecretName(k) && len(v) >= minNamedValue:
		default:
			continue
		}
		add(v, "[redacted:"+k+"]")
		if strings.Contains(v, "\n") {
			for i, line := range strings.Split(v, "\n") {
				if line = strings.TrimSpace(line); len(line) >= minSecretLine {
					add(line, fmt.Sprintf("[redacted:%s line %d]", k, i+1))
				}
			}
		}
	}
	return newRedactor(secrets)
}

func newRedactor(secrets map[string]string) *Redactor {
	if len(secrets) == 0 {
		return &Redactor{}
	}
	values := make([]string, 0, len(secrets))
	for v := range secrets {
		values = append(values, v)
	}
	// Longest first: at one position the first pattern that matches wins, so
	// a whole multi-line secret is masked before any of its lines.
	sort.Slice(values, func(i, j int) bool {
		if len(values[i]) != len(values[j]) {
			return len(values[i]) > len(values[j])
		}
		return values[i] < values[j]
	})
	var mask, restore []string
	for _, v := range values {
		marker := secrets[v]
		mask = append(mask, v, marker)
		for _, esc := range jsonForms(v) {
			mask = append(mask, esc, marker)
		}
		restore = append(restore, marker, v)
	}
	return &Redactor{mask: strings.NewReplacer(mask...), restore: strings.NewReplacer(restore...)}
}

// jsonForms are the ways a JSON string spells v (without its quotes) when
// that differs from v: with and without HTML escaping.
func jsonForms(v string) []string {
	var forms []string
	for _, html := range []bool{true, false} {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		_ = enc.Encode(v)
		s := strings.TrimSuffix(b.String(), "\n")
		s = s[1 : len(s)-1]
		if s != v && (len(forms) == 0 || forms[0] != s) {
			forms = append(forms, s)
		}
	}
	return forms
}

// ForPlan is the redactor of a run of p: orch's environment, the env the
// agents' specs set (for their MCP servers too), and the secrets the
// cuelist and its agents declare (an MCP server's {secret: NAME} declares
// NAME).
func ForPlan(p *planner.Plan) *Redactor {
	environ := os.Environ()
	for _, a := range p.Agents {
		for k, v := range a.Env {
			environ = append(environ, k+"="+spec.EnvValue(v))
		}
		for _, s := range a.MCPServers { // what the agent passes to its own servers
			for _, v := range s.EnvValues() {
				if v.Secret == "" {
					environ = append(environ, v.Name+"="+v.Value)
				}
			}
		}
	}
	declared := Declared(p)
	d := New(environ, declared)
	d.declared = declared
	return d
}

// Declared lists the names of the secrets p declares (sorted, each once):
// the cuelist's secrets, its agents', and their MCP servers' {secret: NAME}.
// Names only: a process that has not the plan's environment (the Temporal
// engine's merge activity, its follower) masks with them and its own.
func Declared(p *planner.Plan) []string {
	var declared []string
	if p.Cuelist != nil {
		declared = append(declared, p.Cuelist.Secrets...)
	}
	for _, a := range p.Agents {
		declared = append(declared, a.Secrets...)
		for _, s := range a.MCPServers {
			declared = append(declared, s.Secrets()...)
		}
	}
	sort.Strings(declared)
	return slices.Compact(declared)
}

// SecretsEnv is ORCH_SECRETS=NAMES for an agent's environment, or "".
func (d *Redactor) SecretsEnv() string {
	if len(d.declared) == 0 {
		return ""
	}
	return SecretsVar + "=" + strings.Join(d.declared, ",")
}

// None reports whether d masks nothing (no secret was found).
func (d *Redactor) None() bool { return d == nil || d.mask == nil }

// Text masks the secrets in s.
func (d *Redactor) Text(s string) string {
	if d.None() {
		return s
	}
	return d.mask.Replace(s)
}

// JSON masks the secrets in a JSON value's strings (keys included), and
// returns raw itself when it holds none.
func (d *Redactor) JSON(raw json.RawMessage) json.RawMessage {
	if d.None() || len(raw) == 0 {
		return raw
	}
	s := string(raw)
	masked := d.mask.Replace(s)
	if masked == s {
		return raw
	}
	// Replacing inside JSON text could break an escape sequence (a secret
	// starting with "n" after a backslash): mask the decoded strings and
	// encode again.
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return json.RawMessage(masked)
	}
	b, err := json.Marshal(d.Value(v))
	if err != nil {
		return json.RawMessage(masked)
	}
	return b
}

// Restore puts back the secrets a recorded value had (a run's inputs, a
// completed cue's outputs), from this process's environment.
func (d *Redactor) Restore(v map[string]any) map[string]any {
	if d.None() || v == nil {
		return v
	}
	m, _ := walkStrings(v, d.restore.Replace).(map[string]any)
	return m
}

// RestoreText puts back the secrets of a text masked elsewhere (a person's
// answer, masked by orch answer before it was stored), from this process's
// environment.
func (d *Redactor) RestoreText(s string) string {
	if d.None() {
		return s
	}
	return d.restore.Replace(s)
}

// RestoreValue puts back the secrets in every string of a decoded JSON
// value (a copy; map keys too), from this process's environment.
func (d *Redactor) RestoreValue(v any) any {
	if d.None() {
		return v
	}
	return walkStrings(v, d.restore.Replace)
}

func walkStrings(v any, f func(string) string) any {
	switch v := v.(type) {
	case string:
		return f(v)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[f(k)] = walkStrings(x, f)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = walkStrings(x, f)
		}
		return out
	}
	return v
}

// Texts masks each string of a list (a copy; nil stays nil).
func (d *Redactor) Texts(list []string) []string {
	if d.None() || list == nil {
		return list
	}
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = d.mask.Replace(s)
	}
	return out
}

// Object masks every string of a free-form object (inputs, outputs), keys
// included (a copy; nil stays nil). A value of a Go type other than JSON's
// own is masked through its JSON form.
func (d *Redactor) Object(m map[string]any) map[string]any {
	if d.None() || m == nil {
		return m
	}
	out, _ := d.Value(m).(map[string]any)
	return out
}

// Value masks the secrets in every string of a value (a copy), map keys
// included; a value of a Go type other than JSON's own is masked through
// its JSON form.
func (d *Redactor) Value(v any) any {
	if d.None() {
		return v
	}
	switch v := v.(type) {
	case nil, bool, float64, json.Number, int, int64:
		return v
	case string:
		return d.mask.Replace(v)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[d.mask.Replace(k)] = d.Value(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = d.Value(x)
		}
		return out
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return v // it will not encode either: the recorder reports it
	}
	dec := json.NewDecoder(strings.NewReader(string(d.JSON(raw))))
	dec.UseNumber()
	var masked any
	if dec.Decode(&masked) != nil {
		return v
	}
	return masked
}
