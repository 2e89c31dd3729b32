package spec

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"sort"
)

// Hash fingerprints every loaded file (its absolute path and contents), as a
// local run records it (run.started's spec_hash): resume checks that the
// cuelist did not change.
func (s *Set) Hash() string {
	return s.hash(func(f *File) string { return f.Abs })
}

// HashBelow fingerprints every loaded file by its path relative to root and
// its contents: the same project checked out at two places hashes the
// same, so a run on Temporal (which records this hash) is accepted by
// workers whose --root is another directory, on another machine. A file
// outside root (which LoadOptions.Root forbids) counts by its absolute
// path.
func (s *Set) HashBelow(root string) string {
	base, err := filepath.Abs(root)
	if err == nil {
		if real, err := filepath.EvalSymlinks(base); err == nil {
			base = real // File.Abs has its symlinks resolved too
		}
	}
	return s.hash(func(f *File) string {
		rel, err := filepath.Rel(base, f.Abs)
		if err != nil || !filepath.IsLocal(rel) {
			return f.Abs
		}
		return "./" + filepath.ToSlash(rel)
	})
}

func (s *Set) hash(name func(*File) string) string {
	files := make([]*File, len(s.Files))
	copy(files, s.Files)
	names := make(map[*File]string, len(files))
	for _, f := range files {
		names[f] = name(f)
	}
	sort.Slice(files, func(i, j int) bool { return names[files[i]] < names[files[j]] })
	h := sha256.New()
	for _, f := range files {
		fmt.Fprintf(h, "%s\x00%d\x00", names[f], len(f.Data))
		h.Write(f.Data)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
