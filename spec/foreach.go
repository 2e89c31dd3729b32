package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
)

// ForEach fans a cue out over a list (issue 30): each item becomes a task
// of its own, CUE[0], CUE[1]… (CUE[<id>] for an object item with an id),
// with its own phases, attempts, retries, fallbacks, resources, timeout and
// worktree. The items are a static list (Items, from `for_each: [a, b]` or
// `for_each: {items: [...]}`) or an upstream cue's output that is a JSON
// array (From, "CUE.key"). The cue completes when every item has; its
// outputs are lists in item order.
type ForEach struct {
	Items       []any  `json:"items,omitempty"`
	From        string `json:"from,omitempty"`
	As          string `json:"as,omitempty"`           // the item's name in prompts (default "item")
	MaxParallel int    `json:"max_parallel,omitempty"` // items in GO at once (0: only the run's max_parallel bounds them)
	OnFailure   string `json:"on_failure,omitempty"`   // fast (default) or continue
	MaxItems    int    `json:"max_items,omitempty"`    // the most items the list may have (default DefaultMaxItems)

	list    bool // written as a list (for_each: [a, b]): where diagnostics point
	neither bool // an object with neither items nor from
}

// DefaultMaxItems is how many items a fan-out takes when max_items is not
// set: past it the cue fails, naming the count.
const DefaultMaxItems = 1000

// Fan-out failure policies.
const (
	OnFailureFast     = "fast"     // stop the other items; the cue fails
	OnFailureContinue = "continue" // every item runs; the cue fails if any failed
)

// UnmarshalJSON takes the list form (for_each: [a, b, c]) or the object
// form. A value of another type has been reported by the schema: failing
// here would stop encoding/json from decoding the fields after it.
func (f *ForEach) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '[' {
		var items []any
		_ = json.Unmarshal(b, &items)
		*f = ForEach{Items: items, list: true}
		if items == nil {
			f.Items = []any{}
		}
		return nil
	}
	type plain ForEach // without this method
	var p plain
	_ = json.Unmarshal(b, &p)
	*f = ForEach(p)
	if f.From == "" && f.Items == nil {
		f.neither = true
		f.Items = []any{}
	}
	return nil
}

// decodeForEach decodes a cue's for_each from its YAML value (nil when the
// cue has none). The items become JSON values (numbers float64), as an
// upstream output's are.
func decodeForEach(v any) *ForEach {
	switch v.(type) {
	case []any, map[string]any:
	default:
		return nil // nothing, or a wrong type the schema reports
	}
	b, err := json.Marshal(v)
	if err != nil {
		return &ForEach{neither: true}
	}
	f := &ForEach{}
	_ = f.UnmarshalJSON(b)
	return f
}

// MarshalJSON keeps a static empty list a list (the plan travels as JSON to
// another engine's workers).
func (f ForEach) MarshalJSON() ([]byte, error) {
	type plain ForEach
	if f.From == "" {
		items := f.Items
		if items == nil {
			items = []any{}
		}
		return json.Marshal(struct {
			plain
			Items []any `json:"items"`
		}{plain(f), items})
	}
	return json.Marshal(plain(f))
}

// Name is what the item is called in prompts ({{.task.title}}).
func (f *ForEach) Name() string {
	if f.As == "" {
		return "item"
	}
	return f.As
}

// Limit is the most items the list may have.
func (f *ForEach) Limit() int {
	if f.MaxItems > 0 {
		return f.MaxItems
	}
	return DefaultMaxItems
}

// Fast reports whether a failed item stops the others (on_failure: fast,
// the default).
func (f *ForEach) Fast() bool { return f.OnFailure != OnFailureContinue }

// Source splits From into the cue and the output key it reads (the
// longest part before a dot that isCue says is a cue, as a condition's).
func (f *ForEach) Source(isCue func(string) bool) (cue, key string, ok bool) {
	return OutputCondition(f.From, isCue)
}

// itemIDPattern is what an item's own id may be: a cue id's characters, so
// that CUE[<id>] is a task id, a branch name's part and a file name.
var itemIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// maxItemID bounds an item's own id, as a cue id is bounded.
const maxItemID = 128

// ItemIDs names the items of a fan-out of cue: CUE[i], or CUE[<id>] for an
// object item with an "id" (a string or an integer). An id that is not a
// valid name, or two items with one name, is an *ItemError.
func ItemIDs(cue string, items []any) ([]string, error) {
	ids := make([]string, len(items))
	seen := make(map[string]int, len(items))
	for i, it := range items {
		name, err := itemName(i, it)
		if err != nil {
			return nil, &ItemError{Item: i, Reason: err.Error()}
		}
		if j, dup := seen[name]; dup {
			return nil, &ItemError{Item: i, Reason: fmt.Sprintf("items %d and %d are both named %s[%s] (an item's id must be unique, and differ from the other items' positions)", j, i, cue, name)}
		}
		seen[name] = i
		ids[i] = cue + "[" + name + "]"
	}
	return ids, nil
}

// ItemError says which item of a list cannot be named, and why.
type ItemError struct {
	Item   int
	Reason string
}

func (e *ItemError) Error() string { return e.Reason }

// itemName is item i's name inside the brackets.
func itemName(i int, it any) (string, error) {
	obj, ok := it.(map[string]any)
	if !ok {
		return strconv.Itoa(i), nil
	}
	v, ok := obj["id"]
	if !ok {
		return strconv.Itoa(i), nil
	}
	var name string
	switch v := v.(type) {
	case string:
		name = v
	case float64:
		if v != math.Trunc(v) || math.Abs(v) > 1<<53 {
			return "", fmt.Errorf("item %d has id %v: an item's id is a string or an integer", i, v)
		}
		name = strconv.FormatInt(int64(v), 10)
	case json.Number:
		n, err := v.Int64()
		if err != nil {
			return "", fmt.Errorf("item %d has id %s: an item's id is a string or an integer", i, v)
		}
		name = strconv.FormatInt(n, 10)
	default:
		return "", fmt.Errorf("item %d has an id of type %s: an item's id is a string or an integer", i, JSONType(v))
	}
	if len(name) > maxItemID || !itemIDPattern.MatchString(name) {
		return "", fmt.Errorf("item %d has id %q: an item's id uses letters, digits, '_', '.' and '-', starts with a letter or digit, and has at most %d characters", i, name, maxItemID)
	}
	return name, nil
}

// JSONType names the JSON type of a decoded value with its article, for
// messages ("an object", "a string").
func JSONType(v any) string { return article(jsonType(v)) }

// reservedItemNames are the GO task's own fields: a fan-out's item cannot
// take one of their names in prompts.
var reservedItemNames = map[string]bool{"run_id": true, "cue_id": true, "agent_id": true, "attempt": true,
	"inputs": true, "blackboard": true, "handoff_context": true, "blackboard_entries": true, "task_id": true,
	"parent_task_id": true, "depth": true, "tools": true, "workspace": true}

// itemsPointer is where item i is written (below the cue).
func (f *ForEach) itemsPointer(i int) string {
	if f.list {
		return Pointer("for_each", i)
	}
	return Pointer("for_each", "items", i)
}

// forEach checks a cue's for_each as far as the cue alone tells: the form,
// the item's name, and a static list's size and ids. What its from names
// (a cue upstream, an output its agents provide) is the planner's check.
func (c *checker) forEach(cue *Cue) {
	f := cue.ForEach
	if f == nil {
		return
	}
	if f.neither {
		c.errorAt(cue.Origin, "/for_each", "bad-for-each", "for_each of cue %s has neither items nor from: list the items (for_each: [a, b]) or name an upstream output (from: CUE.key)", cue.ID)
		return
	}
	if f.From != "" && f.Items != nil {
		c.errorAt(cue.Origin, "/for_each/from", "bad-for-each", "for_each of cue %s has both items and from: the items are written here or read from an upstream output, not both", cue.ID)
		return
	}
	if reservedItemNames[f.As] {
		c.errorAt(cue.Origin, "/for_each/as", "bad-for-each", "for_each of cue %s names its item %q, a field the GO task already has: choose another name (task, file, ...)", cue.ID, f.As)
	}
	if f.From != "" {
		return
	}
	if n := len(f.Items); n > f.Limit() {
		c.errorAt(cue.Origin, "/for_each", "too-many-items", "for_each of cue %s has %d items, more than max_items (%d): raise max_items or split the list", cue.ID, n, f.Limit())
		return
	}
	if _, err := ItemIDs(cue.ID, f.Items); err != nil {
		var ie *ItemError
		errors.As(err, &ie)
		c.errorAt(cue.Origin, f.itemsPointer(ie.Item), "bad-item-id", "for_each of cue %s: %v", cue.ID, err)
	}
}
