package spec

import (
	"os"
	"path/filepath"
	"testing"
)

// TestHashBelowIgnoresWhereTheProjectIs: the same project (a cuelist and
// the agents it includes) copied to two directories has one HashBelow
// (what a run on Temporal records and its workers check) but two Hash (a
// local run's, which resume compares on the same machine); a changed file
// changes both.
func TestHashBelowIgnoresWhereTheProjectIs(t *testing.T) {
	var roots []string
	var sets []*Set
	for _, name := range []string{"one", "checkout-two"} {
		root := filepath.Join(t.TempDir(), name)
		if err := os.CopyFS(filepath.Join(root, "examples", "deploy"), os.DirFS(filepath.Join("..", "examples", "deploy"))); err != nil {
			t.Fatal(err)
		}
		set, diags, err := Load([]string{filepath.Join(root, "examples", "deploy", "cuelist.yaml")}, LoadOptions{Root: root})
		if err != nil || diags.HasErrors() {
			t.Fatalf("%v %v", err, diags)
		}
		if len(set.Files) < 2 {
			t.Fatalf("loaded %d file(s): the test wants the includes too", len(set.Files))
		}
		roots, sets = append(roots, root), append(sets, set)
	}
	if a, b := sets[0].HashBelow(roots[0]), sets[1].HashBelow(roots[1]); a != b {
		t.Errorf("HashBelow differs between two copies: %s, %s", a, b)
	}
	if a, b := sets[0].Hash(), sets[1].Hash(); a == b {
		t.Errorf("Hash is the same for two places: %s", a)
	}
	before := sets[1].HashBelow(roots[1])
	f := sets[1].Files[len(sets[1].Files)-1]
	f.Data = append(f.Data, '\n')
	if sets[1].HashBelow(roots[1]) == before {
		t.Error("HashBelow did not change with a file")
	}
}
