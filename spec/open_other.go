//go:build !unix

package spec

// openNonblock is unix-only; elsewhere the mode check before reading suffices.
const openNonblock = 0
