//go:build !linux

package proc

import "os"

// pipesTraced: off Linux a process's pipes are not looked at (no /proc).
const pipesTraced = false

func pipeID(*os.File) string { return "" }
func heldPipes(int) []string { return nil }
