package main

import (
	"encoding/json"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdSeqs checks that FILE holds JSON events, one a line, whose seq run
// 1, 2, ... N with no gap and no repeat:
//
//	seqs FILE
func cmdSeqs(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: seqs FILE")
	}
	lines := strings.Split(strings.TrimSuffix(ts.ReadFile(args[0]), "\n"), "\n")
	for i, line := range lines {
		var e struct{ Seq int64 }
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			ts.Fatalf("%s:%d: %v", args[0], i+1, err)
		}
		if e.Seq != int64(i+1) {
			ts.Fatalf("%s:%d: seq %d, want %d (%d lines)", args[0], i+1, e.Seq, i+1, len(lines))
		}
	}
}
