//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// cbreak turns off the terminal's line editing and echo on f, so that the
// live display reads keys as they are typed and shows the answer being
// typed in its prompt area itself. Signals stay on: Ctrl-C interrupts the
// run as anywhere else. Output processing stays on too (\n is a new line).
// restore puts the terminal back as it was.
func cbreak(f *os.File) (restore func(), ok bool) {
	fd := int(f.Fd())
	old, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return nil, false
	}
	raw := *old
	raw.Lflag &^= unix.ICANON | unix.ECHO
	raw.Cc[unix.VMIN], raw.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(fd, ioctlSetTermios, &raw); err != nil {
		return nil, false
	}
	return func() { _ = unix.IoctlSetTermios(fd, ioctlSetTermios, old) }, true
}

// notifyResize sends on ch when the terminal's size changes (SIGWINCH);
// the returned function stops it.
func notifyResize(ch chan<- os.Signal) (stop func()) {
	signal.Notify(ch, syscall.SIGWINCH)
	return func() { signal.Stop(ch) }
}
