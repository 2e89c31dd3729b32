package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at release time with -ldflags "-X main.version=v1.2.3".
var version = ""

func versionString() string {
	if version != "" {
		return version
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "dev"
}

func newVersionCmd(io *streams) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print orch's version",
		Example: "  orch version",
		Args:    argsBetween(0, 0),
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintf(io.out, "orch %s (%s, %s/%s)\n", versionString(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return err
		},
	}
}
