package main

import (
	"fmt"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// version overrides the module version of the build info, for a build
// that has none: go build -ldflags "-X main.version=v1.2.3".
var version = ""

// buildDesc is what orch knows of its own build.
type buildDesc struct {
	version string // module version: v1.2.3, a pseudo-version, or "dev"
	commit  string // VCS revision, full or as a pseudo-version abbreviates it
	date    string // commit time, RFC 3339 UTC
	dirty   bool   // built from a tree with uncommitted changes
}

// pseudoRev matches the end of a pseudo-version: the commit's time and the
// first 12 hex digits of its revision (v0.0.0-20261123024900-abcdef123456).
var pseudoRev = regexp.MustCompile(`(?:^|[-.])(\d{14})-([0-9a-f]{12})(?:\+incompatible)?$`)

// describeBuild reads the build info. A binary built in a clone has the
// VCS settings (revision, time, modified); one built by go install
// module@version has none, but its module version says which commit it is.
func describeBuild(info *debug.BuildInfo, override string) buildDesc {
	d := buildDesc{version: "dev"}
	if info != nil {
		if v := info.Main.Version; v != "" && v != "(devel)" {
			d.version = strings.TrimSuffix(v, "+dirty")
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				d.commit = s.Value
			case "vcs.time":
				d.date = s.Value
			case "vcs.modified":
				d.dirty = s.Value == "true"
			}
		}
	}
	if override != "" {
		d.version = override
	}
	if d.commit == "" {
		if m := pseudoRev.FindStringSubmatch(d.version); m != nil {
			d.commit = m[2]
			if t, err := time.Parse("20060102150405", m[1]); err == nil {
				d.date = t.UTC().Format(time.RFC3339)
			}
		}
	}
	return d
}

// versionString is orch's module version alone (--version, SARIF).
func versionString() string {
	info, _ := debug.ReadBuildInfo()
	return describeBuild(info, version).version
}

// versionLine is the line orch version and orch --version print.
func versionLine() string {
	info, _ := debug.ReadBuildInfo()
	return describeBuild(info, version).String()
}

// String is the line orch version prints.
func (d buildDesc) String() string {
	var parts []string
	if d.commit != "" {
		c := "commit " + d.commit
		if d.dirty {
			c += " (modified)"
		}
		parts = append(parts, c)
	}
	if d.date != "" {
		parts = append(parts, d.date)
	}
	parts = append(parts, runtime.Version(), runtime.GOOS+"/"+runtime.GOARCH)
	return fmt.Sprintf("orch %s (%s)", d.version, strings.Join(parts, ", "))
}

func newVersionCmd(io *streams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print orch's version, commit and build date",
		Long: `Print orch's module version (a release tag such as v1.2.3, or a pseudo-version
for a go install of a commit, or "dev" for a build from a clone without one),
the commit it was built from and the commit's date, the Go version and the
platform.`,
		Example: "  orch version",
		Args:    argsBetween(0, 0),
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintln(io.out, versionLine())
			return err
		},
	}
}
