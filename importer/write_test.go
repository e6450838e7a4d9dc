package importer

import (
	"slices"
	"strings"
	"testing"

	"github.com/ccload/ccload/config"
)

// TestLiteralsRoundTrip: what the input says is what ccload reads, "$"
// and YAML-looking values included.
func TestLiteralsRoundTrip(t *testing.T) {
	keys := []string{"pa$word", "x${HOME}y", "a$$b$", "true", "- [x]: y", "#k"}
	ch := &Channel{Name: "r", URLs: []URL{{URL: Lit("https://r.example.com/$${x}")}},
		Models: []Model{{Name: "yes"}, {Name: "1.5", Upstream: "m${X}"}}}
	for _, k := range keys {
		ch.Keys = append(ch.Keys, SecretValue(k))
	}
	res, err := Render(&Config{Format: FormatCCLoadCSV, Channels: []*Channel{ch}}, "t", KeepSecrets)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := config.Parse("t.yaml", res.YAML, config.Env{Lookup: func(k string) (string, bool) {
		if k == "CCLOAD_PASS" {
			return "pw", true
		}
		t.Errorf("the file references ${%s}", k)
		return "", false
	}})
	if err != nil {
		t.Fatalf("%v\n%s", err, res.YAML)
	}
	c := snap.Channels[0]
	for i, k := range c.Keys {
		if k.Reveal() != keys[i] {
			t.Errorf("key %d = %q, want %q", i, k.Reveal(), keys[i])
		}
	}
	if c.URLs[0].URL != "https://r.example.com/$${x}" || c.Models[0].Name != "yes" || c.Models[1].Name != "1.5" || c.Models[1].Upstream != "m${X}" {
		t.Errorf("channel = %+v", c)
	}
	if res.Literals != len(keys) {
		t.Errorf("Literals = %d, want %d", res.Literals, len(keys))
	}
}

// TestEnvSecrets: every literal key becomes a reference named after its
// channel; the same key in two channels is one variable.
func TestEnvSecrets(t *testing.T) {
	cfg := &Config{Format: FormatCCLoadCSV, Channels: []*Channel{
		{Name: "relay-a", Keys: []Value{SecretValue("s1"), Env("FROM_INPUT"), SecretValue("s2")}},
		{Name: "9lives", Keys: []Value{SecretValue("s3"), SecretValue("s1")}},
	}}
	for _, ch := range cfg.Channels {
		ch.URLs = []URL{{URL: Lit("https://x.example.com")}}
		ch.Models = []Model{{Name: "m"}}
	}
	res, err := Render(cfg, "t", EnvSecrets)
	if err != nil {
		t.Fatal(err)
	}
	want := []EnvVar{{"RELAY_A_KEY_1", "s1"}, {"RELAY_A_KEY_3", "s2"}, {"CH_9LIVES_KEY_1", "s3"}}
	if !slices.Equal(res.Env, want) {
		t.Errorf("env = %v, want %v", res.Env, want)
	}
	out := string(res.YAML)
	for _, s := range []string{"s1", "s2", "s3"} {
		if strings.Contains(out, "- "+s) {
			t.Errorf("literal key %s in the output", s)
		}
	}
	if got := Vars(res.YAML); !slices.Equal(got, []string{"CCLOAD_PASS", "CH_9LIVES_KEY_1", "FROM_INPUT", "RELAY_A_KEY_1", "RELAY_A_KEY_3"}) {
		t.Errorf("Vars = %v", got)
	}
	if res.Literals != 0 {
		t.Errorf("Literals = %d in EnvSecrets mode", res.Literals)
	}
}

func TestVars(t *testing.T) {
	got := Vars([]byte("a: ${A}\nb: $${NOT}\nc: $$${C:-x}\nd: ${D:-${E}}\ne: ${A}\n"))
	if !slices.Equal(got, []string{"A", "C", "D", "E"}) {
		t.Errorf("Vars = %v", got)
	}
}

func TestSlug(t *testing.T) {
	tests := map[string]string{
		"Anthropic Main":   "anthropic-main",
		"  relay__A--01 ":  "relay-a-01",
		"OpenAI (backup)!": "openai-backup",
	}
	for in, want := range tests {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
	a, b := slug("Gemini 备用"), slug("Gemini 主力")
	if a == b || !strings.HasPrefix(a, "gemini-") || a != slug("Gemini 备用") {
		t.Errorf("slugs of Chinese names: %q %q (want distinct, stable, gemini-...)", a, b)
	}
	if s := slug("中转站"); !strings.HasPrefix(s, "channel-") || len(s) != len("channel-")+6 {
		t.Errorf("slug(中转站) = %q", s)
	}
	n := namer{}
	if got := []string{n.unique("x"), n.unique("x"), n.unique("x-2"), n.unique("x")}; !slices.Equal(got, []string{"x", "x-2", "x-2-2", "x-3"}) {
		t.Errorf("unique = %v", got)
	}
}

// TestCommentsFit: comment lines stay within 100 columns.
func TestCommentsFit(t *testing.T) {
	for _, in := range inputs(t) {
		for i, line := range strings.Split(string(render(t, in, KeepSecrets).YAML), "\n") {
			if strings.Contains(strings.TrimSpace(line), "# ") && len([]rune(line)) > 100 {
				t.Errorf("%s:%d is %d columns: %s", in, i+1, len([]rune(line)), line)
			}
		}
	}
}
