package main

import (
	"runtime/debug"
	"testing"
)

// TestDescribeBuild: the version, commit and date come from the build info
// of each way orch is built.
func TestDescribeBuild(t *testing.T) {
	vcs := func(rev, at, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "-trimpath", Value: "true"}, {Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: rev}, {Key: "vcs.time", Value: at}, {Key: "vcs.modified", Value: modified}}
	}
	rev := "0123456789abcdef0123456789abcdef01234567"
	for _, tc := range []struct {
		name     string
		info     *debug.BuildInfo
		override string
		want     buildDesc
	}{
		{"release from a tagged clone",
			&debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}, Settings: vcs(rev, "2026-11-20T10:00:00Z", "false")}, "",
			buildDesc{version: "v1.2.3", commit: rev, date: "2026-11-20T10:00:00Z"}},
		{"clone with changes past a tag",
			&debug.BuildInfo{Main: debug.Module{Version: "v1.2.4-0.20261120100000-0123456789ab+dirty"}, Settings: vcs(rev, "2026-11-20T10:00:00Z", "true")}, "",
			buildDesc{version: "v1.2.4-0.20261120100000-0123456789ab", commit: rev, date: "2026-11-20T10:00:00Z", dirty: true}},
		{"go install of a commit: no vcs settings, a pseudo-version",
			&debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261123024900-abcdef123456"}}, "",
			buildDesc{version: "v0.0.0-20261123024900-abcdef123456", commit: "abcdef123456", date: "2026-11-23T02:49:00Z"}},
		{"go install of a pre-release commit",
			&debug.BuildInfo{Main: debug.Module{Version: "v1.3.0-rc.1.0.20261123024900-abcdef123456"}}, "",
			buildDesc{version: "v1.3.0-rc.1.0.20261123024900-abcdef123456", commit: "abcdef123456", date: "2026-11-23T02:49:00Z"}},
		{"go install of a tag", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, "", buildDesc{version: "v1.2.3"}},
		{"build without vcs info", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "", buildDesc{version: "dev"}},
		{"no build info", nil, "", buildDesc{version: "dev"}},
		{"version set by the linker wins",
			&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "2026-11-20T10:00:00Z", "false")}, "v9.9.9",
			buildDesc{version: "v9.9.9", commit: rev, date: "2026-11-20T10:00:00Z"}},
	} {
		if got := describeBuild(tc.info, tc.override); got != tc.want {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, tc.want)
		}
	}
}
