package config

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/bad/*.want from the current output")

// examplePath is the example file at the repo root, a good case like any in
// testdata/good.
const examplePath = "../ccload.example.yaml"

// corpusEnv is the environment every corpus file is parsed with; nothing
// is read from the machine.
func corpusEnv() Env {
	vars := map[string]string{
		"CCLOAD_TEST_KEY":    "sk-test-from-env-0001",
		"CCLOAD_TEST_PASS":   "correct horse battery staple",
		"CCLOAD_TEST_PRIO":   "high",
		"CCLOAD_TEST_INJECT": "a: b\nc: d",
		"CCLOAD_TEST_EMPTY":  "",
		"CCLOAD_TEST_PORT":   "9090",
	}
	files := map[string]string{
		"testdata/good/secret.txt": "sk-test-from-file-0001\n",
	}
	return Env{
		Lookup: func(k string) (string, bool) { v, ok := vars[k]; return v, ok },
		ReadFile: func(p string) ([]byte, error) {
			if v, ok := files[filepath.ToSlash(p)]; ok {
				return []byte(v), nil
			}
			return nil, &os.PathError{Op: "open", Path: p, Err: os.ErrNotExist}
		},
	}
}

func goodFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("testdata/good/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no good corpus: %v", err)
	}
	return append(files, examplePath)
}

// TestGoodConfigs loads every file of the good corpus and the example.
func TestGoodConfigs(t *testing.T) {
	for _, f := range goodFiles(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Parse(f, data, corpusEnv()); err != nil {
				t.Fatalf("want no problems, got:\n%v", err)
			}
		})
	}
}

// TestExampleNeedsNoEnv: `ccload check --offline -c ccload.example.yaml` and
// `make demo` run it with nothing set.
func TestExampleNeedsNoEnv(t *testing.T) {
	data, err := os.ReadFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse("ccload.example.yaml", data, Env{})
	if err != nil {
		t.Fatalf("example must load with an empty environment:\n%v", err)
	}
	if !strings.HasPrefix(string(data), "# yaml-language-server: $schema=./schema/ccload.schema.json\n") {
		t.Error("example must start with the yaml-language-server schema line")
	}
	for _, c := range s.Channels {
		for _, u := range c.URLs {
			if !strings.Contains(u.URL, ":9901") {
				t.Errorf("channel %s: URL %s does not default to the mock upstream", c.Name, u.URL)
			}
		}
	}
	for _, name := range []string{"anthropic-main", "openai-main", "codex", "gemini", "anthropic-backup"} {
		if s.Channel(name) == nil {
			t.Errorf("example lacks channel %s", name)
		}
	}
	demo := s.TokenBySHA256("7ca81ace38dc355aba633514613a65f52cb85d033d567942757d96f8f6bed04c") // sha256("sk-ccload-demo")
	if demo == nil || demo.Name != "demo" {
		t.Errorf("demo token with the hash of sk-ccload-demo: got %+v", demo)
	}
	r := s.Routes("claude-opus-4-8")
	if len(r) == 0 || r[0].Channel.Name != "anthropic-main" || r[0].Upstream != "claude-opus-4-6" {
		t.Errorf("claude-opus-4-8 routes = %+v", r)
	}
}

// TestBadConfigs compares the problems of each testdata/bad file with its
// .want file (go test -run TestBadConfigs -update rewrites them; review the
// diff).
func TestBadConfigs(t *testing.T) {
	files, err := filepath.Glob("testdata/bad/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no bad corpus: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".yaml"), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			s, err := Parse(filepath.Base(f), data, corpusEnv())
			if err == nil {
				t.Fatalf("want problems, got a snapshot with %d channels", len(s.Channels))
			}
			var ps Problems
			if !errors.As(err, &ps) {
				t.Fatalf("errors.As(Problems) failed for %T: %v", err, err)
			}
			got := err.Error() + "\n"
			wantFile := strings.TrimSuffix(f, ".yaml") + ".want"
			if *update {
				if err := os.WriteFile(wantFile, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(wantFile)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("problems differ\n--- got\n%s--- want\n%s", got, want)
			}
			for _, p := range ps {
				if strings.Contains(p.Msg, "sk-test-") {
					t.Errorf("problem leaks a key: %s", p)
				}
			}
		})
	}
}

// TestDefaults: a minimal file gets the documented defaults.
func TestDefaults(t *testing.T) {
	s := mustParse(t, `version: 1
channels:
  - name: c
    urls: [https://api.anthropic.com]
    keys: [k-000000000001]
    models: [m]
tokens:
  - name: t
    token: sk-x
`)
	if s.Server.Listen != "127.0.0.1:8080" || s.Server.MaxBodyBytes != 10<<20 || s.Server.AdminPassword != "" || s.Server.DebugMaxBytes != 64<<10 {
		t.Errorf("server = %+v", s.Server)
	}
	if s.Storage.Driver != "sqlite" || s.Storage.DSN.Reveal() != "data/ccload.db" || s.Storage.LogRetention.D() != 7*24*time.Hour {
		t.Errorf("storage = %+v", s.Storage)
	}
	if s.Routing != DefaultRouting {
		t.Errorf("routing = %+v", s.Routing)
	}
	r := s.Routing
	if r.Cooldown.Auth.D() != 5*time.Minute || r.Cooldown.Max.D() != 30*time.Minute || !r.Cooldown.Fallback ||
		r.Timeouts.NonStream.D() != 120*time.Second || r.Timeouts.Stream != 0 || r.MaxAttempts != 6 ||
		!r.HealthScore.Enabled || r.HealthScore.MinSamples != 20 || r.HealthScore.Penalty != 100 {
		t.Errorf("routing defaults drifted: %+v", r)
	}
	c := s.Channels[0]
	if c.Priority != 0 || c.Weight != 1 || c.KeyStrategy != KeyRoundRobin || c.CostMultiplier != 1 || !c.Enabled ||
		c.ActiveHours != nil || c.Check != nil {
		t.Errorf("channel = %+v", c)
	}
	if c.Models[0] != (Model{Name: "m", Upstream: "m"}) {
		t.Errorf("model = %+v", c.Models[0])
	}
	// sha256("sk-x"); the plain token itself is kept nowhere.
	const sum = "9df37f5e7cbc3c391d872742b5f286c242e733a09add9eeaa4d26a599bd90b20"
	if tok := s.Tokens[0]; tok.SHA256 != sum || s.TokenBySHA256(sum) != tok {
		t.Errorf("token = %+v, want hash %s", tok, sum)
	}
}

// TestIndexes: routes are keyed by the client name, in file order, over
// enabled channels and enabled models only.
func TestIndexes(t *testing.T) {
	s := mustParse(t, `version: 1
channels:
  - name: a
    urls: [https://a.example.com]
    keys: [k-000000000001]
    models: [m1, {name: m2, upstream: up2}, {name: m3, disabled: true}]
  - name: off
    enabled: false
    urls: [https://b.example.com]
    keys: [k-000000000001]
    models: [m1]
  - name: b
    urls: [https://c.example.com]
    keys: [k-000000000001]
    models: [m1, m2]
`)
	names := func(rs []Route) (out []string) {
		for _, r := range rs {
			out = append(out, r.Channel.Name+":"+r.Model+"->"+r.Upstream)
		}
		return out
	}
	for model, want := range map[string][]string{
		"m1":  {"a:m1->m1", "b:m1->m1"},
		"m2":  {"a:m2->up2", "b:m2->m2"},
		"m3":  nil,
		"up2": nil,
	} {
		if got := names(s.Routes(model)); !slices.Equal(got, want) {
			t.Errorf("Routes(%q) = %v, want %v", model, got, want)
		}
	}
	if s.Channel("off") == nil || s.Channel("off").Enabled || s.Channel("nope") != nil {
		t.Error("Channel lookup wrong")
	}
	if got := s.Models(); !slices.Equal(got, []string{"m1", "m2"}) {
		t.Errorf("Models() = %v", got)
	}
}

func TestProblemsFormat(t *testing.T) {
	ps := Problems{
		{File: "b.yaml", Line: 1, Col: 1, Msg: "z"},
		{File: "a.yaml", Line: 10, Col: 2, Msg: "y"},
		{File: "a.yaml", Line: 2, Col: 5, Msg: "x"},
		{File: "a.yaml", Line: 2, Col: 5, Msg: "x"},
		{File: "a.yaml", Line: 3, Msg: "no column"},
		{File: "a.yaml", Msg: "whole file"},
	}
	ps.Sort()
	want := "a.yaml: whole file\na.yaml:2:5: x\na.yaml:3: no column\na.yaml:10:2: y\nb.yaml:1:1: z"
	if got := ps.Error(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if (Problems{}).Err() != nil || ps.Err() == nil {
		t.Error("Err() wrong")
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.yaml"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load of a missing file: %v", err)
	}
}

func mustParse(t *testing.T, yml string) *Snapshot {
	t.Helper()
	s, err := Parse("test.yaml", []byte(yml), Env{})
	if err != nil {
		t.Fatalf("parse:\n%v", err)
	}
	return s
}

// TestOAuthChannel: an oauth channel gets the provider's defaults, the
// Codex endpoint, and one key placeholder per account, so that key
// selection and cooldowns treat accounts as keys.
func TestOAuthChannel(t *testing.T) {
	s, err := Load("testdata/good/oauth.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := s.Channel("chatgpt")
	if c.OAuthIssuer != "https://auth.openai.com" || c.OAuthClientID == "" {
		t.Errorf("defaults: issuer %q client %q", c.OAuthIssuer, c.OAuthClientID)
	}
	if len(c.URLs) != 1 || c.URLs[0].URL != "https://chatgpt.com/backend-api/codex/responses" || !c.URLs[0].Exact {
		t.Errorf("urls = %+v", c.URLs)
	}
	if len(c.Keys) != 2 || c.Keys[1] != AccountKey("bob") {
		t.Errorf("keys = %v", c.Keys)
	}
	if a, ok := AccountOf(c.Keys[0]); !ok || a != "alice" {
		t.Errorf("AccountOf = %q %v", a, ok)
	}
	m := s.Channel("codex-mock")
	if m.OAuthIssuer != "http://127.0.0.1:1455" || m.URLs[0].URL != "http://127.0.0.1:1456/backend-api/codex/responses" {
		t.Errorf("mock channel: %q %+v", m.OAuthIssuer, m.URLs)
	}
	if b, ok := ParseSecretKey(s.Server.SecretKey.Reveal()); !ok || len(b) != 32 {
		t.Error("secret key not parsed")
	}
}
