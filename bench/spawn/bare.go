//go:build unix && bare

package main

import (
	"fmt"
	"os"
)

// Built with -tags bare, the spawner links no SQLite: the driver's package
// initialization alone costs a process about 1 ms of CPU, which the bare
// spawner's figures (bench/cpu.sh, bench/run.sh) must not include.
func spawnRecorded(int, int, []string, string, string) {
	fmt.Fprintln(os.Stderr, "spawn: built with -tags bare: no -record")
	os.Exit(2)
}
