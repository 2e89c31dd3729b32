package mcpbridge

import (
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// The endpoint listens with plain TCP: Go's default listener takes Multipath
// TCP where the kernel has it, probed at the first listen of every orch run
// (a loopback endpoint gains nothing from it). Where the kernel has no
// MPTCP, Go falls back to TCP and this test cannot tell the difference.
func TestEndpointListensWithPlainTCP(t *testing.T) {
	e := startEndpoint(t)
	u, err := url.Parse(e.URL())
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd:", err)
	}
	for _, f := range fds {
		fd, err := strconv.Atoi(f.Name())
		if err != nil {
			continue
		}
		if link, _ := os.Readlink("/proc/self/fd/" + f.Name()); !strings.HasPrefix(link, "socket:") {
			continue
		}
		sa, err := syscall.Getsockname(fd)
		if in4, ok := sa.(*syscall.SockaddrInet4); err != nil || !ok || in4.Port != port {
			continue
		}
		proto, err := syscall.GetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_PROTOCOL)
		if err != nil {
			t.Fatal(err)
		}
		if proto != syscall.IPPROTO_TCP {
			t.Fatalf("the endpoint's socket has protocol %d, want TCP (%d); 262 is Multipath TCP", proto, syscall.IPPROTO_TCP)
		}
		return
	}
	t.Fatalf("no socket of this process listens on port %d", port)
}
