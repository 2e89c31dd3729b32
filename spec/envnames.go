package spec

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// EnvValue is a scalar value (an agent's env, a plain agent's input) as an
// environment variable holds it: a string as it is, a number without an
// exponent or trailing zeros, anything else as fmt prints it.
func EnvValue(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// InputVar is the environment variable a plain agent gets an input in:
// ORCH_INPUT_ and the key in upper case, every character but A-Z, 0-9 and _
// made _. So keys that differ only in case or punctuation (a_b, A-B) would
// be one variable, and one of the values would be lost: inputVarClashes
// reports them.
func InputVar(key string) string {
	var b strings.Builder
	b.Grow(len("ORCH_INPUT_") + len(key))
	b.WriteString("ORCH_INPUT_")
	for _, r := range strings.ToUpper(key) {
		if !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			r = '_'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// inputClashes are the groups of keys, among every input and provided key
// of a cuelist, that share an InputVar.
func (c *checker) inputClashes(cl *Cuelist) [][]string {
	byVar := map[string]map[string]bool{}
	add := func(key string) {
		v := InputVar(key)
		if byVar[v] == nil {
			byVar[v] = map[string]bool{}
		}
		byVar[v][key] = true
	}
	for k := range cl.Inputs {
		add(k)
	}
	for _, cue := range cl.Cues {
		for k := range cue.Inputs {
			add(k)
		}
		for _, k := range c.cueProvides(cue) {
			add(k)
		}
	}
	var groups [][]string
	for _, keys := range byVar {
		if len(keys) > 1 {
			group := make([]string, 0, len(keys))
			for k := range keys {
				group = append(group, k)
			}
			sort.Strings(group)
			groups = append(groups, group)
		}
	}
	sort.Slice(groups, func(i, j int) bool { return groups[i][0] < groups[j][0] })
	return groups
}

// inputVarClash reports the keys of a group that reach cue (has) together:
// at the cue's input among them, else at the cuelist's (once), else at the
// cue. reported holds what was reported already, so that keys provided
// upstream are reported at the first cue they reach together.
func (c *checker) inputVarClash(cl *Cuelist, cue *Cue, group []string, has func(string) bool, reported map[string]bool) {
	var present []string
	for _, k := range group {
		if has(k) {
			present = append(present, k)
		}
	}
	if len(present) < 2 {
		return
	}
	id := strings.Join(present, "\x00")
	clash := fmt.Sprintf("one environment variable, %s, for a plain agent (the value of one would be lost): name them apart", InputVar(present[0]))
	for _, k := range present {
		if _, ok := cue.Inputs[k]; ok {
			c.errorAtKey(cue.Origin, Pointer("inputs", k), "input-var-clash", "cue %s: inputs %s are %s", cue.ID, quoteList(present), clash)
			return
		}
	}
	if reported[id] {
		return
	}
	reported[id] = true
	all := true
	for _, k := range present {
		_, in := cl.Inputs[k]
		all = all && in
	}
	if all {
		c.errorAtKey(cl.Origin, Pointer("inputs", present[len(present)-1]), "input-var-clash", "inputs %s are %s", quoteList(present), clash)
		return
	}
	c.errorAtKey(cue.Origin, "/id", "input-var-clash", "cue %s receives %s, which are %s", cue.ID, quoteList(present), clash)
}

// errorAtKey reports at the key of the field at ptr.
func (c *checker) errorAtKey(o Origin, ptr, code, format string, args ...any) {
	pos := o.At(ptr)
	if o.Doc != nil {
		pos = o.Doc.KeyPos(o.Ptr + ptr)
	}
	c.diags.Add(Error, pos, o.Ptr+ptr, code, format, args...)
}
