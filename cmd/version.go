package cmd

import (
	"fmt"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// Build is what package main knows about the binary: the version, commit
// and build date that the Makefile and Dockerfile pass with
// -ldflags "-X main.…", and the starter config it embeds (go:embed cannot
// reach ccload.example.yaml from cmd/).
type Build struct {
	Version, Commit, Date string
	ExampleConfig         []byte
}

// versionInfo is `ccload version`: the version (from -ldflags, as
// `make release` stamps `git describe`; else the module version, a tag for
// `go install github.com/ccload/ccload@vX`, "(devel)" for a checkout), the
// commit and date (from -ldflags, else the VCS stamp the go command
// records) and the Go toolchain.
type versionInfo struct {
	Version, Commit, Date, Go string
	Modified                  bool
}

// readVersion fills versionInfo from b and the binary's build info.
func readVersion(b Build, bi *debug.BuildInfo, ok bool) versionInfo {
	v := versionInfo{Version: "(devel)", Commit: b.Commit, Date: b.Date, Go: runtime.Version()}
	if b.Version != "" {
		v.Version = b.Version
	}
	if !ok {
		return v
	}
	if b.Version == "" && bi.Main.Version != "" {
		v.Version = bi.Main.Version
	}
	if bi.GoVersion != "" {
		v.Go = bi.GoVersion
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			if v.Commit == "" {
				v.Commit = s.Value
			}
		case "vcs.time":
			if v.Date == "" {
				v.Date = s.Value
			}
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	// `go install …@version` builds from the module cache, which has no VCS
	// stamp; a pseudo-version (an untagged commit, as @latest is before the
	// first tag) still names the commit and its time.
	if m := pseudoVersionRe.FindStringSubmatch(v.Version); m != nil {
		if v.Commit == "" {
			v.Commit = m[2]
		}
		if t, err := time.Parse("20060102150405", m[1]); err == nil && v.Date == "" {
			v.Date = t.UTC().Format(time.RFC3339)
		}
	}
	return v
}

// pseudoVersionRe matches the tail of a Go pseudo-version,
// "v0.0.0-20261204163700-0ff2ad0e4ce1" (or "…-pre.0.20261204163700-…"):
// the commit time in UTC and the first twelve hex digits of the commit.
var pseudoVersionRe = regexp.MustCompile(`[-.](\d{14})-([0-9a-f]{12})(?:\+incompatible)?$`)

func (v versionInfo) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "ccload %s\n", v.Version)
	commit := v.Commit
	if commit == "" {
		commit = "unknown"
	}
	if v.Modified {
		commit += " (modified)"
	}
	date := v.Date
	if date == "" {
		date = "unknown"
	}
	fmt.Fprintf(&b, "  commit:  %s\n  built:   %s\n  go:      %s %s/%s\n", commit, date, v.Go, runtime.GOOS, runtime.GOARCH)
	return b.String()
}

// label is the version in one word or two, for the instance list:
// "v1.2.0", or "(devel) 1a2b3c4d5e6f" when the commit is known.
func (v versionInfo) label() string {
	if c := v.Commit; c != "" {
		return v.Version + " " + c[:min(len(c), 12)]
	}
	return v.Version
}

// NewCmdVersion builds `ccload version` (also `ccload --version`).
func NewCmdVersion(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit, build date and Go version",
		Long: `Print the version (the release tag, or the module version of
` + "`go install github.com/ccload/ccload@VERSION`" + `, or (devel) for a build of a
checkout), the commit and build date, and the Go version and platform.`,
		Example: `  ccload version
  ccload --version`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprint(f.IO.Out, f.version())
			return err
		},
	}
}

func (f *Factory) version() versionInfo {
	bi, ok := debug.ReadBuildInfo()
	return readVersion(f.Build, bi, ok)
}
