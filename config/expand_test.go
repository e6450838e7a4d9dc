package config

import (
	"os"
	"strings"
	"testing"
)

func mapEnv(vars map[string]string, files map[string]string) Env {
	return Env{
		Lookup: func(k string) (string, bool) { v, ok := vars[k]; return v, ok },
		ReadFile: func(p string) ([]byte, error) {
			if v, ok := files[p]; ok {
				return []byte(v), nil
			}
			return nil, &os.PathError{Op: "open", Path: p, Err: os.ErrNotExist}
		},
	}
}

func TestExpand(t *testing.T) {
	env := mapEnv(
		map[string]string{"A": "alpha", "EMPTY": "", "NL": "a: b\nc: d", "DOLLAR": "x${A}y"},
		map[string]string{"/run/secrets/key": "sk-from-file\n\n", "/run/secrets/crlf": "v\r\n", "base/rel.txt": "rel"},
	)
	for _, tc := range []struct{ in, want, err string }{
		{in: "plain", want: "plain"},
		{in: "${A}", want: "alpha"},
		{in: "pre-${A}-post", want: "pre-alpha-post"},
		{in: "${A:-default}", want: "alpha"},
		{in: "${UNSET:-default}", want: "default"},
		{in: "${UNSET:-}", want: ""},
		{in: "${EMPTY}", want: ""},                 // set but empty: no error
		{in: "${EMPTY:-default}", want: "default"}, // ":-" also covers empty, as in sh
		{in: "${UNSET:-${A}}", want: "alpha"},      // a default is expanded
		{in: "${UNSET:-${ALSO:-deep}}", want: "deep"},
		{in: "${DOLLAR}", want: "x${A}y"}, // a value is never expanded again
		{in: "${NL}", want: "a: b\nc: d"}, // stays one string
		{in: "$$", want: "$"},
		{in: "$${A}", want: "${A}"},
		{in: "pa$$word", want: "pa$word"},
		{in: "pa$word", want: "pa$word"}, // a lone $ is literal
		{in: "cost: 5$", want: "cost: 5$"},
		{in: "${UNSET:-a$$b}", want: "a$b"},
		{in: "${file:/run/secrets/key}", want: "sk-from-file"},
		{in: "${file:/run/secrets/crlf}", want: "v"},
		{in: "${file:rel.txt}", want: "rel"}, // relative to the config's directory
		{in: "${file:/missing:-fallback}", want: "fallback"},
		{in: "${UNSET}", err: "environment variable UNSET is not set"},
		{in: "${UNSET:-${ALSO}}", err: "environment variable ALSO is not set"},
		{in: "${A", err: `unterminated "${"`},
		{in: "${}", err: `invalid variable name ""`},
		{in: "${9LIVES}", err: `invalid variable name "9LIVES"`},
		{in: "${A B}", err: `invalid variable name "A B"`},
		{in: "${file:}", err: "${file:} needs a path"},
		{in: "${file:/missing}", err: "${file:/missing}: file does not exist"},
	} {
		x := expander{env: env, baseDir: "base"}
		got, err := x.expand(tc.in)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("expand(%q) error = %v, want %q", tc.in, err, tc.err)
		case tc.err == "" && err != nil:
			t.Errorf("expand(%q) error: %v", tc.in, err)
		case tc.err == "" && got != tc.want:
			t.Errorf("expand(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestExpandNoEnv(t *testing.T) {
	x := expander{} // the zero Env reads nothing
	if _, err := x.expand("${HOME}"); err == nil {
		t.Error("zero Env must not see the process environment")
	}
	if _, err := x.expand("${file:/etc/hostname}"); err == nil || !strings.Contains(err.Error(), "not enabled") {
		t.Errorf("zero Env must not read files: %v", err)
	}
}

// TestExpandInParse reads testdata/good/env.yaml and checks each expansion
// landed where it should, typed as the field wants.
func TestExpandInParse(t *testing.T) {
	data, err := os.ReadFile("testdata/good/env.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse("testdata/good/env.yaml", data, corpusEnv())
	if err != nil {
		t.Fatal(err)
	}
	if s.Server.Listen != "127.0.0.1:9090" {
		t.Errorf("listen = %q", s.Server.Listen)
	}
	if s.Server.AdminPassword.Reveal() != "pa$word" {
		t.Errorf("admin_password = %q", s.Server.AdminPassword.Reveal())
	}
	c := s.Channels[0]
	if c.Priority != 9090 || !c.Enabled || c.URLs[0].URL != "https://api.anthropic.com" {
		t.Errorf("channel = %+v", c)
	}
	var keys []string
	for _, k := range c.Keys {
		keys = append(keys, k.Reveal())
	}
	want := []string{"sk-test-from-env-0001", "sk-test-from-file-0001", "sk-fallback-key-01", "literal-$-dollar-key"}
	if strings.Join(keys, ",") != strings.Join(want, ",") {
		t.Errorf("keys = %q, want %q", keys, want)
	}
	// Quoted stays a string; plain takes the type of its text.
	if got := string(c.Rewrite.Body[0].Value); got != `"4096"` {
		t.Errorf("quoted body value = %s", got)
	}
	if got := string(c.Rewrite.Body[1].Value); got != `4096` {
		t.Errorf("plain body value = %s", got)
	}
	if s.deps["testdata/good/secret.txt"] == "" {
		t.Errorf("deps = %v, want the secret file recorded", s.deps)
	}
}

// TestExpansionCannotChangeStructure: a value that looks like YAML stays
// one scalar wherever it lands.
func TestExpansionCannotChangeStructure(t *testing.T) {
	env := mapEnv(map[string]string{
		"INJECT": "a: b\nc: d",
		"LIST":   "x\n- y\n- z",
		"FLOW":   "x, y]",
	}, nil)
	yml := `version: 1
channels:
  - name: ${INJECT}
    urls: [https://api.anthropic.com]
    keys: ["${LIST}", "${FLOW}"]
    models: ["${INJECT}"]
tokens:
  - name: t
    token: ${INJECT}
`
	s, err := Parse("inject.yaml", []byte(yml), env)
	if err != nil {
		t.Fatal(err)
	}
	c := s.Channels[0]
	if c.Name != "a: b\nc: d" || len(c.Keys) != 2 || c.Keys[0].Reveal() != "x\n- y\n- z" || c.Keys[1].Reveal() != "x, y]" {
		t.Errorf("channel = %+v", c)
	}
	if len(c.Models) != 1 || c.Models[0].Name != "a: b\nc: d" {
		t.Errorf("models = %+v", c.Models)
	}
	if len(s.Tokens) != 1 {
		t.Errorf("tokens = %+v", s.Tokens)
	}

	// In a typed field it is a type error at the field, nothing more.
	_, err = Parse("inject.yaml", []byte("version: 1\nrouting:\n  max_attempts: ${INJECT}\n"), env)
	want := `inject.yaml:3:17: routing.max_attempts: want integer, got "a: b\nc: d"`
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

// TestMissingVariablePosition: the problem names the line and column of
// the scalar that uses the variable.
func TestMissingVariablePosition(t *testing.T) {
	yml := "version: 1\nserver:\n  listen: 127.0.0.1:8080\n  admin_password: ${NOPE}\n"
	_, err := Parse("ccload.yaml", []byte(yml), Env{})
	want := "ccload.yaml:4:19: server.admin_password: environment variable NOPE is not set (write ${NOPE:-default} to give a default)"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

func TestRelativeFileFromConfigDir(t *testing.T) {
	var asked []string
	env := Env{ReadFile: func(p string) ([]byte, error) { asked = append(asked, p); return []byte("pw\n"), nil }}
	s, err := Parse("/etc/ccload/ccload.yaml", []byte("version: 1\nserver: {admin_password: \"${file:secrets/pw}\"}\n"), env)
	if err != nil {
		t.Fatal(err)
	}
	if len(asked) != 1 || asked[0] != "/etc/ccload/secrets/pw" || s.Server.AdminPassword.Reveal() != "pw" {
		t.Errorf("asked %v, password %q", asked, s.Server.AdminPassword.Reveal())
	}
}
