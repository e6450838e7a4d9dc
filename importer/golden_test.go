package importer

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ccload/ccload/config"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.yaml from the current output")

// inputs are the sample files: testdata/*.csv and *.yaml, not goldens.
func inputs(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, pat := range []string{"testdata/*.csv", "testdata/*.yaml"} {
		m, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			if !strings.HasSuffix(f, ".golden.yaml") {
				out = append(out, f)
			}
		}
	}
	if len(out) < 3 {
		t.Fatalf("only %d sample inputs in testdata", len(out))
	}
	return out
}

func golden(in string) string { return strings.TrimSuffix(in, filepath.Ext(in)) + ".golden.yaml" }

// render reads and renders one sample, detecting its format.
func render(t *testing.T, in string, mode SecretMode) *Result {
	t.Helper()
	data, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Read(data, "")
	if err != nil {
		t.Fatalf("Read(%s): %v", in, err)
	}
	res, err := Render(cfg, filepath.Base(in), mode)
	if err != nil {
		t.Fatalf("Render(%s): %v", in, err)
	}
	return res
}

// TestGolden compares the output for every sample with its golden file,
// one case per file; go test -run Golden -update rewrites them.
func TestGolden(t *testing.T) {
	for _, in := range inputs(t) {
		t.Run(filepath.Base(in), func(t *testing.T) {
			got := render(t, in, KeepSecrets).YAML
			g := golden(in)
			if *update {
				if err := os.WriteFile(g, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(g)
			if err != nil {
				t.Fatalf("%v (run go test ./importer -run Golden -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("output differs from %s:\n%s", g, firstDiff(string(want), string(got)))
			}
		})
	}
}

// firstDiff shows the first line where want and got differ.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return "line " + strconv.Itoa(i+1) + ":\n  want: " + a + "\n  got:  " + b
		}
	}
	return "(same lines, different bytes)"
}

// TestOutputsPassCheck: every output, with literal keys and with
// references, loads with the real config loader once exactly the variables
// it references are set, as `ccload check --offline` would.
func TestOutputsPassCheck(t *testing.T) {
	for _, in := range inputs(t) {
		for _, mode := range []SecretMode{KeepSecrets, EnvSecrets} {
			res := render(t, in, mode)
			vars := Vars(res.YAML)
			env := map[string]string{}
			placeholder := PlaceholderEnv()
			for _, v := range vars {
				env[v], _ = placeholder.Lookup(v)
			}
			for _, e := range res.Env {
				env[e.Name] = e.Value
			}
			snap, err := config.Parse(golden(in), res.YAML, config.Env{Lookup: func(k string) (string, bool) {
				v, ok := env[k]
				return v, ok
			}})
			if err != nil {
				t.Errorf("%s (mode %d) does not load:\n%v\nvariables set: %v", in, mode, err, vars)
				continue
			}
			if len(snap.Channels) == 0 {
				t.Errorf("%s: no channels", in)
			}
			if !slicesContain(vars, "CCLOAD_PASS") {
				t.Errorf("%s: admin_password does not reference CCLOAD_PASS", in)
			}
		}
	}
}

func slicesContain(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestDetect: the format comes from the content, whatever the name.
func TestDetect(t *testing.T) {
	for _, in := range inputs(t) {
		data, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		want := FormatCCLoadCSV
		if strings.HasSuffix(in, ".yaml") {
			want = FormatLiteLLM
		}
		if got, err := Detect(data); got != want || err != nil {
			t.Errorf("Detect(%s) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "hello", "a,b,c\n1,2,3\n", "version: 1\nchannels: []\n", "[1, 2"} {
		if f, err := Detect([]byte(bad)); err == nil {
			t.Errorf("Detect(%q) = %q, want an error", bad, f)
		}
	}
}
