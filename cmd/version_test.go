package cmd

import (
	"debug/buildinfo"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func TestReadVersion(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.99.1", Main: debug.Module{Path: "ccload", Version: "v1.2.3"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.time", Value: "2026-01-02T03:04:05Z"}, {Key: "vcs.modified", Value: "true"}}}

	v := readVersion(Build{}, bi, true)
	if v.Version != "v1.2.3" || v.Commit != "abc123" || v.Date != "2026-01-02T03:04:05Z" || !v.Modified || v.Go != "go1.99.1" {
		t.Fatalf("from build info: %+v", v)
	}
	// -ldflags values win over the VCS stamp.
	v = readVersion(Build{Commit: "def456", Date: "2026-12-01T00:00:00Z"}, bi, true)
	if v.Commit != "def456" || v.Date != "2026-12-01T00:00:00Z" {
		t.Fatalf("ldflags ignored: %+v", v)
	}
	want := "ccload v1.2.3\n  commit:  def456 (modified)\n  built:   2026-12-01T00:00:00Z\n  go:      go1.99.1 " + runtime.GOOS + "/" + runtime.GOARCH + "\n"
	if v.String() != want {
		t.Fatalf("String:\n%s\nwant:\n%s", v, want)
	}
	// A version stamped with -ldflags (make release: git describe) wins
	// over the module version, which is "(devel)" in a checkout.
	if v := readVersion(Build{Version: "v1.4.0-3-gabc123"}, bi, true); v.Version != "v1.4.0-3-gabc123" {
		t.Fatalf("ldflags version ignored: %+v", v)
	}
	// go install …@<untagged commit>: no VCS stamp, but the pseudo-version
	// names the commit and its time.
	pseudo := &debug.BuildInfo{Main: debug.Module{Path: "github.com/ccload/ccload", Version: "v0.0.0-20261204163700-0ff2ad0e4ce1"}}
	if v := readVersion(Build{}, pseudo, true); v.Commit != "0ff2ad0e4ce1" || v.Date != "2026-12-04T16:37:00Z" {
		t.Fatalf("from a pseudo-version: %+v", v)
	}
	pseudo.Main.Version = "v1.3.0-rc.1.0.20261204163700-0ff2ad0e4ce1"
	if v := readVersion(Build{}, pseudo, true); v.Commit != "0ff2ad0e4ce1" {
		t.Fatalf("from a pre-release pseudo-version: %+v", v)
	}
	pseudo.Main.Version = "v1.2.3" // a tag names no commit
	if v := readVersion(Build{}, pseudo, true); v.Commit != "" || v.Date != "" {
		t.Fatalf("from a tag: %+v", v)
	}
	if v := readVersion(Build{}, nil, false); v.Version != "(devel)" || !strings.Contains(v.String(), "commit:  unknown") {
		t.Fatalf("without build info: %+v", v)
	}
}

func TestVersionCommandAndFlagAgree(t *testing.T) {
	f := func() (*Factory, func() string) {
		io, out, _ := testIO()
		return &Factory{IO: io, Build: Build{Commit: "c0ffee", Date: "2026-12-01T15:00:00Z"}}, out.String
	}
	f1, out1 := f()
	if err := runRoot(t, f1, "version"); err != nil {
		t.Fatal(err)
	}
	f2, out2 := f()
	if err := runRoot(t, f2, "--version"); err != nil {
		t.Fatal(err)
	}
	if out1() != out2() || !strings.HasPrefix(out1(), "ccload ") || !strings.Contains(out1(), "commit:  c0ffee") {
		t.Fatalf("version:\n%s--version:\n%s", out1(), out2())
	}
}

// TestVersionOfBuiltBinary builds the real binary twice: with the stamps
// `make release` passes, which `ccload version` must print as given, and
// without them, where it must print what the go command recorded in the
// binary (module version, and the VCS revision and time when the build
// had them). Flags as the other binary-building tests use them, so the
// compiled packages come from the build cache and only the link runs.
func TestVersionOfBuiltBinary(t *testing.T) {
	build := func(ldflags string) (bin, out string) {
		bin = filepath.Join(t.TempDir(), "ccload")
		if out, err := exec.Command("go", "build", "-ldflags", ldflags, "-o", bin, "github.com/ccload/ccload").CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
		o, err := exec.Command(bin, "version").CombinedOutput()
		if err != nil {
			t.Fatalf("ccload version: %v\n%s", err, o)
		}
		return bin, string(o)
	}

	_, stamped := build("-X main.version=v9.8.7 -X main.commit=0123456789abcdef -X main.date=2026-01-02T03:04:05Z")
	for _, want := range []string{"ccload v9.8.7\n", "commit:  0123456789abcdef", "built:   2026-01-02T03:04:05Z"} {
		if !strings.Contains(stamped, want) {
			t.Errorf("stamped build: want %q in\n%s", want, stamped)
		}
	}

	bin, plain := build("")
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	want := readVersion(Build{}, bi, true)
	if want.Version != "(devel)" || !strings.HasPrefix(plain, "ccload (devel)\n") {
		t.Errorf("unstamped build of a checkout: want version (devel), got\n%s", plain)
	}
	for _, line := range strings.Split(want.String(), "\n")[:3] {
		if !strings.Contains(plain, line) {
			t.Errorf("unstamped build: want %q (from the binary's build info) in\n%s", line, plain)
		}
	}
}

// TestEveryCommandHasHelp: each command a user sees says in one line what
// it does and shows examples, as `ccload help` promises.
func TestEveryCommandHasHelp(t *testing.T) {
	io, _, _ := testIO()
	root := NewRootCmd(&Factory{IO: io})
	root.InitDefaultCompletionCmd()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if c.Hidden || c.Name() == "help" || c.Parent() != nil && c.Parent().Name() == "completion" || c.Name() == "completion" {
			return // cobra's own, with their own help
		}
		if c.Short == "" || strings.Contains(c.Short, "\n") || strings.HasSuffix(c.Short, ".") {
			t.Errorf("%s: Short %q: want one line without a final period", c.CommandPath(), c.Short)
		}
		if !strings.Contains(c.Example, "ccload ") {
			t.Errorf("%s has no example", c.CommandPath())
		}
	}
	walk(root)
}
