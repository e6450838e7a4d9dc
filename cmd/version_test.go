package cmd

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
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
