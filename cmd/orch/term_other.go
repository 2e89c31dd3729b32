//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package main

import "os"

// cbreak is not available here (Windows): prompts read whole lines, the
// terminal echoing what is typed.
func cbreak(*os.File) (restore func(), ok bool) { return nil, false }

// notifyResize: without SIGWINCH the display notices a new width at its
// next redraw (it reads the width at each).
func notifyResize(chan<- os.Signal) (stop func()) { return func() {} }
