package spec

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
)

// Hash fingerprints every loaded file (its absolute path and contents), as a
// run records it (run.started's spec_hash): resume and orch-temporal's
// workers check that the cuelist did not change.
func (s *Set) Hash() string {
	files := append([]*File(nil), s.Files...)
	sort.Slice(files, func(i, j int) bool { return files[i].Abs < files[j].Abs })
	h := sha256.New()
	for _, f := range files {
		fmt.Fprintf(h, "%s\x00%d\x00", f.Abs, len(f.Data))
		h.Write(f.Data)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
