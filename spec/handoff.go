package spec

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Problem is one reason a handoff is not acceptable, with the JSON pointer
// (relative to the handoff message) of the field it is about.
type Problem struct {
	Ptr     string
	Code    string
	Message string
}

// HandoffProblems checks a handoff from one agent to another, as a spec file or
// a task.handoff sent at run time: the receiver exists and is in the sender's
// handoff_to, every key the receiver requires is in the context, and artifact
// paths stay inside the project. With root set, each artifact is also opened
// inside root and its sha256 compared.
func HandoffProblems(from *Agent, toID string, to *Agent, ctx map[string]any, root *os.Root) []Problem {
	var out []Problem
	if to == nil {
		out = append(out, Problem{"/to_agent", "unknown-agent", fmt.Sprintf("to_agent names unknown agent %q", toID)})
	}
	if from != nil && toID != "" && !contains(from.HandoffTo, toID) {
		allowed := "it lists none"
		if len(from.HandoffTo) > 0 {
			allowed = "it allows " + quoteList(from.HandoffTo)
		}
		out = append(out, Problem{"/to_agent", "handoff-not-allowed",
			fmt.Sprintf("agent %q may not hand off to %q: not in its handoff_to (%s)", from.ID, toID, allowed)})
	}
	if to != nil {
		var missing []string
		for _, r := range to.Requires {
			if _, ok := ctx[r]; !ok {
				missing = append(missing, r)
			}
		}
		if len(missing) > 0 {
			sort.Strings(missing)
			out = append(out, Problem{"/handoff_context", "missing-context",
				fmt.Sprintf("handoff_context lacks %s, which %q requires", quoteList(missing), to.ID)})
		}
	}
	list, _ := ctx["artifacts_produced"].([]any)
	for i, e := range list {
		m, _ := e.(map[string]any)
		p, _ := m["path"].(string)
		hash, _ := m["hash"].(string)
		ptr := Pointer("handoff_context", "artifacts_produced", i, "path")
		if err := ArtifactPathError(p); err != nil {
			out = append(out, Problem{ptr, "bad-artifact-path", err.Error()})
			continue
		}
		if root != nil {
			if err := CheckArtifact(root, Artifact{Path: p, Hash: hash}); err != nil {
				code := "artifact-missing"
				if strings.Contains(err.Error(), "hash") {
					code, ptr = "artifact-hash", Pointer("handoff_context", "artifacts_produced", i, "hash")
				}
				out = append(out, Problem{ptr, code, err.Error()})
			}
		}
	}
	return out
}

// ArtifactPathError says why an artifact path is not a path inside the project.
func ArtifactPathError(p string) error {
	switch {
	case p == "":
		return errors.New("artifact path is empty")
	case filepath.IsAbs(p) || strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`):
		return fmt.Errorf("artifact path %q is absolute; use a path relative to the project", p)
	}
	for _, part := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' }) {
		if part == ".." {
			return fmt.Errorf("artifact path %q leaves the project with '..'", p)
		}
	}
	return nil
}

// CheckArtifact opens the artifact inside root (symlinks cannot lead out) and,
// if it has a hash, compares the file's sha256 with it.
func CheckArtifact(root *os.Root, a Artifact) error {
	f, err := root.OpenFile(filepath.FromSlash(a.Path), os.O_RDONLY|openNonblock, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("artifact %q does not exist", a.Path)
		}
		return fmt.Errorf("artifact %q: %v", a.Path, err)
	}
	defer f.Close()
	// A FIFO (opened without waiting for a writer) or a device is never
	// read: only a regular file is an artifact.
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		if err == nil {
			err = fmt.Errorf("not a regular file (%s)", fileKind(info.Mode()))
		}
		return fmt.Errorf("artifact %q: %v", a.Path, err)
	}
	if a.Hash == "" {
		return nil
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("artifact %q: %v", a.Path, err)
	}
	got := hex.EncodeToString(h.Sum(nil))
	want := strings.ToLower(strings.TrimPrefix(a.Hash, "sha256:"))
	if got != want {
		return fmt.Errorf("artifact %q hash mismatch: the file has sha256:%s, the handoff says sha256:%s", a.Path, got, want)
	}
	return nil
}

func (c *checker) handoff(h *Handoff) {
	if h.From == "" {
		c.errorAt(h.Origin, "", "missing-field", "a handoff spec needs from_agent, to check it against the sender's handoff_to")
	}
	from := c.agents[h.From]
	if h.From != "" && from == nil {
		c.agentRef(h.Origin, "/from_agent", h.From, "from_agent")
	}
	var root *os.Root
	if c.opts.CheckArtifacts {
		dir := c.opts.Root
		if dir == "" {
			dir = "."
		}
		r, err := os.OpenRoot(dir)
		if err != nil {
			c.errorAt(h.Origin, "", "artifact-root", "cannot open project root %s to check artifacts: %v", dir, err)
		} else {
			defer r.Close()
			root = r
		}
	}
	to := c.agents[h.To]
	for _, p := range HandoffProblems(from, h.To, to, h.Context, root) {
		if p.Code == "unknown-agent" {
			c.agentRef(h.Origin, p.Ptr, h.To, "to_agent")
			continue
		}
		if p.Code == "handoff-not-allowed" && c.namesUnknown(from.HandoffTo) {
			continue // its handoff_to has an unknown agent, reported: perhaps a typo of this one
		}
		pos := h.At(p.Ptr)
		if p.Code == "missing-context" {
			pos = h.Doc.KeyPos(p.Ptr) // the handoff_context: key, not its first entry
		}
		c.diags.Add(Error, pos, p.Ptr, p.Code, "%s", p.Message)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// namesUnknown reports whether a list of agent ids holds one that is not defined.
func (c *checker) namesUnknown(ids []string) bool {
	for _, id := range ids {
		if c.agents[id] == nil {
			return true
		}
	}
	return false
}
