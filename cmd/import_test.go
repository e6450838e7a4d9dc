package cmd

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/importer"
)

// The samples of the importer package; every secret in them contains
// TESTKEY or TESTSECRET, so a leak is easy to find.
var (
	importSamples = []string{
		"../importer/testdata/ccload_export.csv",
		"../importer/testdata/ccload_legacy_zh.csv",
		"../importer/testdata/litellm_config.yaml",
	}
	sampleSecret = regexp.MustCompile(`[^\s'"]*TEST(KEY|SECRET)[^\s'",]*`)
	neverInFile  = regexp.MustCompile(`[^\s'"]*(TESTSECRET|lf-TESTKEY)[^\s'",]*`)
)

func importIO(in string) (IOStreams, *bytes.Buffer, *bytes.Buffer) {
	out, errb := &bytes.Buffer{}, &bytes.Buffer{}
	return IOStreams{In: strings.NewReader(in), Out: out, Err: errb}, out, errb
}

func importExitCode(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	if err != nil {
		return exitUsage // Execute's mapping of cobra's own errors
	}
	return exitOK
}

// TestNewCmdImport checks the flags through runF only.
func TestNewCmdImport(t *testing.T) {
	tests := []struct {
		args     string
		want     ImportOptions
		wantCode int
	}{
		{args: "channels.csv", want: ImportOptions{File: "channels.csv"}},
		{args: "config.yaml -o ccload.yaml --format litellm", want: ImportOptions{File: "config.yaml", Output: "ccload.yaml", Format: "litellm"}},
		{args: "c.csv --output=x.yaml --format=ccload-csv --with-secrets --env-keys --force",
			want: ImportOptions{File: "c.csv", Output: "x.yaml", Format: "ccload-csv", WithSecrets: true, EnvKeys: true, Force: true}},
		{args: "-", want: ImportOptions{File: "-"}},
		{args: "", wantCode: exitUsage},
		{args: "a.csv b.csv", wantCode: exitUsage},
		{args: "a.csv --format xml", wantCode: exitUsage},
		{args: "a.csv --nope", wantCode: exitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			io, _, _ := importIO("")
			var got *ImportOptions
			cmd := NewCmdImport(&Factory{IO: io}, func(o *ImportOptions) error { got = o; return nil })
			cmd.SetArgs(strings.Fields(tt.args))
			cmd.SetOut(&bytes.Buffer{})
			cmd.SetErr(&bytes.Buffer{})
			err := cmd.Execute()
			if code := importExitCode(err); code != tt.wantCode {
				t.Fatalf("exit code %d (%v), want %d", code, err, tt.wantCode)
			}
			if tt.wantCode != exitOK {
				if got != nil {
					t.Errorf("runF was called on a usage error")
				}
				return
			}
			got.IO = IOStreams{}
			if *got != tt.want {
				t.Errorf("options = %+v\nwant      %+v", *got, tt.want)
			}
		})
	}
}

// TestImportNoKeysOnTerminal: without --with-secrets, no literal key of
// any sample reaches stdout or stderr, whether the YAML goes to stdout or
// to a file, and the file gets the keys only when it should.
func TestImportNoKeysOnTerminal(t *testing.T) {
	for _, in := range importSamples {
		input, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		secrets := sampleSecret.FindAllString(string(input), -1)
		if len(secrets) == 0 {
			t.Fatalf("%s has no TESTKEY secrets: the test would prove nothing", in)
		}
		for _, flags := range []struct {
			name      string
			toFile    bool
			envKeys   bool
			fileHasIt bool
		}{
			{name: "stdout"},
			{name: "stdout --env-keys", envKeys: true},
			{name: "-o", toFile: true, fileHasIt: true},
			{name: "-o --env-keys", toFile: true, envKeys: true},
		} {
			t.Run(filepath.Base(in)+" "+flags.name, func(t *testing.T) {
				io, stdout, stderr := importIO("")
				opts := &ImportOptions{IO: io, File: in, EnvKeys: flags.envKeys}
				out := filepath.Join(t.TempDir(), "ccload.yaml")
				if flags.toFile {
					opts.Output = out
				}
				if err := importRun(opts); err != nil {
					t.Fatalf("importRun: %v\nstderr: %s", err, stderr)
				}
				terminal := stdout.String() + stderr.String()
				for _, s := range secrets {
					if strings.Contains(terminal, s) {
						t.Errorf("the terminal shows the secret %q", s)
					}
				}
				if !flags.toFile {
					if err := importer.Validate("stdout", stdout.Bytes()); err != nil {
						t.Errorf("stdout is not a valid config: %v", err)
					}
					return
				}
				file, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				// Keys go to the file unless --env-keys; OAuth credentials and
				// LiteLLM's environment_variables values never do.
				if got := sampleSecret.MatchString(strings.Join(neverInFile.Split(string(file), -1), "")); got != flags.fileHasIt {
					t.Errorf("file has literal keys = %v, want %v", got, flags.fileHasIt)
				}
				if neverInFile.Match(file) {
					t.Errorf("file has a secret it must not: %q", neverInFile.FindString(string(file)))
				}
				if st, err := os.Stat(out); err != nil || st.Mode().Perm() != 0o600 {
					t.Errorf("output mode = %v (%v), want 0600", st.Mode().Perm(), err)
				}
			})
		}
	}
}

// TestImportWithSecrets: --with-secrets is the one way a key reaches the
// terminal, which also shows the leak check above can fail.
func TestImportWithSecrets(t *testing.T) {
	in := "../importer/testdata/ccload_export.csv"
	io, stdout, _ := importIO("")
	if err := importRun(&ImportOptions{IO: io, File: in, WithSecrets: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "sk-ant-api03-TESTKEY-official-0001") {
		t.Errorf("--with-secrets without -o: the key is not in stdout")
	}

	// --env-keys --with-secrets -o: references in the file, export lines on
	// stdout, and the two together load.
	io, stdout, stderr := importIO("")
	out := filepath.Join(t.TempDir(), "ccload.yaml")
	if err := importRun(&ImportOptions{IO: io, File: in, Output: out, EnvKeys: true, WithSecrets: true}); err != nil {
		t.Fatal(err)
	}
	file, _ := os.ReadFile(out)
	if sampleSecret.Match(file) {
		t.Errorf("--env-keys: the file has literal keys")
	}
	env := map[string]string{"CCLOAD_PASS": "pw", "CCLOAD_SECRET_KEY": strings.Repeat("ab", 32)}
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		m := regexp.MustCompile(`^export ([A-Z0-9_]+)='(.*)'$`).FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("stdout line %q is not an export line", line)
		}
		env[m[1]] = m[2]
	}
	if env["ANTHROPIC_76BF4E_KEY_1"] != "sk-ant-api03-TESTKEY-official-0001" {
		t.Errorf("export lines: %v", env)
	}
	snap, err := config.Parse(out, file, config.Env{Lookup: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		t.Fatalf("file + export lines do not load: %v\nstderr: %s", err, stderr)
	}
	if got := snap.Channel("anthropic-76bf4e").Keys[1].Reveal(); got != "sk-ant-api03-TESTKEY-official-0002" {
		t.Errorf("key 2 after the round trip = %q", got)
	}
}

func TestImportOutputFile(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "ccload.yaml")
	os.WriteFile(out, []byte("keep me\n"), 0o644)
	in := "../importer/testdata/litellm_config.yaml"

	io, _, _ := importIO("")
	err := importRun(&ImportOptions{IO: io, File: in, Output: out})
	if code := importExitCode(err); code != exitFail || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("existing -o: exit %d (%v), want 1 and a hint at --force", code, err)
	}
	if b, _ := os.ReadFile(out); string(b) != "keep me\n" {
		t.Fatalf("the existing file was changed")
	}
	io, stdout, stderr := importIO("")
	if err := importRun(&ImportOptions{IO: io, File: in, Output: out, Force: true}); err != nil {
		t.Fatal(err)
	}
	if stdout.Len() != 0 {
		t.Errorf("-o: stdout = %q, want nothing", stdout)
	}
	if st, _ := os.Stat(out); st.Mode().Perm() != 0o600 {
		t.Errorf("--force left mode %v, want 0600", st.Mode().Perm())
	}
	if _, err := config.Parse(out, importReadFile(t, out), importer.PlaceholderEnv()); err != nil {
		t.Errorf("--force output does not load: %v", err)
	}
	for _, want := range []string{"imported 8 channels (2 disabled)", "1 literal key written", "AZURE_API_KEY", "next: ccload check --offline -c "} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	io, _, _ = importIO("")
	err = importRun(&ImportOptions{IO: io, File: out, Output: out, Force: true, Format: "litellm"})
	if importExitCode(err) != exitFail {
		t.Errorf("-o naming the input: %v, want exit 1", err)
	}
}

func TestImportBadInput(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.txt")
	os.WriteFile(junk, []byte("hello\nworld\n"), 0o644)
	dotenv := filepath.Join(dir, ".env")
	os.WriteFile(dotenv, []byte("OPENAI_API_KEY=sk-TESTKEY-dotenv,x\nmodel_list=1\n"), 0o600)
	for _, tt := range []struct {
		name string
		opts ImportOptions
	}{
		{"missing file", ImportOptions{File: filepath.Join(dir, "nope.csv")}},
		{"unknown format", ImportOptions{File: junk}},
		{"csv read as litellm", ImportOptions{File: importSamples[0], Format: "litellm"}},
		{"litellm read as csv", ImportOptions{File: importSamples[2], Format: "ccload-csv"}},
		{"env file", ImportOptions{File: dotenv}},
		{"env file read as csv", ImportOptions{File: dotenv, Format: "ccload-csv"}},
		{"env file read as litellm", ImportOptions{File: dotenv, Format: "litellm"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			io, stdout, _ := importIO("")
			tt.opts.IO = io
			err := importRun(&tt.opts)
			if importExitCode(err) != exitFail {
				t.Errorf("exit %d (%v), want 1", importExitCode(err), err)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout = %q, want nothing on failure", stdout)
			}
			if err != nil && strings.Contains(err.Error(), "TESTKEY") {
				t.Errorf("the error shows the input's secret: %v", err)
			}
		})
	}
}

func TestImportStdin(t *testing.T) {
	csv := "name,api_key,urls,models\nrelay,sk-TESTKEY-stdin,https://relay.example.com,gpt-5\n"
	io, stdout, stderr := importIO(csv)
	if err := importRun(&ImportOptions{IO: io, File: "-"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "${RELAY_KEY_1}") || strings.Contains(stdout.String()+stderr.String(), "sk-TESTKEY-stdin") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	if !strings.Contains(stdout.String(), "from stdin (ccLoad channel CSV export)") {
		t.Errorf("the header does not name stdin:\n%s", stdout)
	}
}

func importReadFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
