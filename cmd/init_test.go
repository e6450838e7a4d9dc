package cmd

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runRoot runs the ccload command tree with args, as main does.
func runRoot(t *testing.T, f *Factory, args ...string) error {
	t.Helper()
	root := NewRootCmd(f)
	root.SetArgs(args)
	return root.Execute()
}

func TestInitWritesTheExampleThatPassesCheck(t *testing.T) {
	example, err := os.ReadFile("../ccload.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "ccload.yaml")
	io, out, _ := testIO()
	f := &Factory{IO: io, Build: Build{ExampleConfig: example}}
	if err := runRoot(t, f, "init", file); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, example) {
		t.Fatal("init did not write ccload.example.yaml unchanged")
	}
	if st, _ := os.Stat(file); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600 (the file is meant to hold keys)", st.Mode().Perm())
	}
	for _, want := range []string{"ccload check --offline -c " + file, "ccload serve -c " + file, "ccload tokens new NAME -c " + file} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	cio, cout, cerr := testIO()
	if err := checkRun(&CheckOptions{IO: cio, Config: file, Offline: true}); err != nil {
		t.Fatalf("check --offline on the init output: %v\n%s%s", err, cout, cerr)
	}
}

// TestInitDashPrintsTheExample: `ccload init -` prints the embedded config
// and writes no file, so an installed binary or an image shows what it
// carries.
func TestInitDashPrintsTheExample(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	io, out, _ := testIO()
	f := &Factory{IO: io, Build: Build{ExampleConfig: []byte("version: 1 # starter\n")}}
	if err := runRoot(t, f, "init", "-"); err != nil {
		t.Fatal(err)
	}
	if out.String() != "version: 1 # starter\n" {
		t.Fatalf("stdout %q, want the example as it is", out)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("init - wrote %v", ents)
	}
}

func TestInitKeepsAnExistingFileUnlessForced(t *testing.T) {
	file := filepath.Join(t.TempDir(), "mine.yaml")
	if err := os.WriteFile(file, []byte("version: 1 # mine\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	io, _, _ := testIO()
	f := &Factory{IO: io, Build: Build{ExampleConfig: []byte("version: 1 # starter\n")}}
	err := runRoot(t, f, "init", file)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitFail || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("init over an existing file: %v, want exit 1 naming --force", err)
	}
	if got, _ := os.ReadFile(file); string(got) != "version: 1 # mine\n" {
		t.Fatalf("the existing file changed: %q", got)
	}
	if err := runRoot(t, f, "init", "--force", file); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(file); string(got) != "version: 1 # starter\n" {
		t.Fatalf("--force did not overwrite: %q", got)
	}
	if st, _ := os.Stat(file); st.Mode().Perm() != 0o640 {
		t.Errorf("--force changed the mode to %v", st.Mode().Perm())
	}
}

func TestInitDefaultsToCCLoadYAML(t *testing.T) {
	io, _, _ := testIO()
	var got *InitOptions
	cmd := NewCmdInit(&Factory{IO: io}, func(o *InitOptions) error { got = o; return nil })
	cmd.SetArgs(nil)
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.File != "ccload.yaml" || got.Force {
		t.Fatalf("File=%q Force=%v", got.File, got.Force)
	}
}
