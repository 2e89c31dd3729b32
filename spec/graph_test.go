package spec

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// cuelistOf builds a cuelist from "ID:dep,dep>follow" entries.
func cuelistOf(entries ...string) *Cuelist {
	cl := &Cuelist{ID: "t"}
	for i, e := range entries {
		c := &Cue{Index: i}
		head, follow, _ := strings.Cut(e, ">")
		id, deps, _ := strings.Cut(head, ":")
		c.ID, c.AutoFollow = id, follow
		if deps != "" {
			c.Dependencies = strings.Split(deps, ",")
		}
		cl.Cues = append(cl.Cues, c)
	}
	return cl
}

func ids(cl *Cuelist, idx []int) []string {
	out := make([]string, len(idx))
	for i, v := range idx {
		out[i] = cl.Cues[v].ID
	}
	return out
}

func TestCycles(t *testing.T) {
	tests := []struct {
		name    string
		entries []string
		want    [][]string
	}{
		{"none", []string{"A", "B:A", "C:A,B"}, nil},
		{"self", []string{"A:A"}, [][]string{{"A", "A"}}},
		{"two", []string{"A:B", "B:A"}, [][]string{{"A", "B", "A"}}},
		{"through auto_follow", []string{"X1:X2>X3", "X2:X3", "X3"}, [][]string{{"X1", "X3", "X2", "X1"}}},
		{"two components, file order", []string{"Q:P", "A:B", "B:A", "P:Q"}, [][]string{{"Q", "P", "Q"}, {"A", "B", "A"}}},
		{"shortest through first", []string{"A:D", "B:A", "C:B", "D:C,A"}, [][]string{{"A", "D", "A"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cl := cuelistOf(tt.entries...)
			var got [][]string
			for _, c := range NewCueGraph(cl).Cycles() {
				got = append(got, ids(cl, c))
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("cycles %v, want %v", got, tt.want)
			}
		})
	}
}

func TestOrderIsStable(t *testing.T) {
	cl := cuelistOf("D", "C", "B:D", "A:C", "E:A,B")
	order, ok := NewCueGraph(cl).Order()
	if !ok {
		t.Fatal("reported a cycle")
	}
	if got := strings.Join(ids(cl, order), " "); got != "D C B A E" {
		t.Errorf("order %s, want file order among ready cues: D C B A E", got)
	}
	if _, ok := NewCueGraph(cuelistOf("A:B", "B:A")).Order(); ok {
		t.Error("a cycle was ordered")
	}
}

func TestRingOfTenThousand(t *testing.T) {
	entries := make([]string, 10000)
	for i := range entries {
		entries[i] = fmt.Sprintf("C%d:C%d", i, (i+1)%len(entries))
	}
	cl := cuelistOf(entries...)
	cycles := NewCueGraph(cl).Cycles()
	if len(cycles) != 1 || len(cycles[0]) != 10001 {
		t.Fatalf("got %d cycles, first of length %d", len(cycles), len(cycles[0]))
	}
	if cycles[0][0] != 0 || cycles[0][1] != 9999 {
		t.Errorf("cycle starts %v", ids(cl, cycles[0][:3]))
	}
}
