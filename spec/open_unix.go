//go:build unix

package spec

import "syscall"

// openNonblock makes opening a FIFO return at once instead of waiting for a
// writer; the file's mode is checked before anything is read.
const openNonblock = syscall.O_NONBLOCK
