package importer

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ccload/ccload/config"
)

func readLiteLLM(t *testing.T, y string) *Config {
	t.Helper()
	cfg, err := ReadLiteLLM([]byte(y))
	if err != nil {
		t.Fatalf("ReadLiteLLM: %v", err)
	}
	return cfg
}

func urlOf(ch *Channel) string {
	if len(ch.URLs) == 0 {
		return ""
	}
	u := ch.URLs[0]
	s := u.URL.Text
	if u.Exact {
		s += " exact"
	}
	return s + " " + strings.Join(u.Protocols, ",")
}

// TestLiteLLMURLs: ccload must call the endpoint LiteLLM calls.
func TestLiteLLMURLs(t *testing.T) {
	tests := []struct{ params, want string }{
		{"model: openai/gpt-4o", "https://api.openai.com openai"},
		{"model: gpt-4o", "https://api.openai.com openai"},
		{"model: openai/x\n      api_base: https://relay.example.com/v1/", "https://relay.example.com/v1 openai"},
		{"model: openai/x\n      api_base: https://relay.example.com/openai", "https://relay.example.com/openai/chat/completions exact openai"},
		{"model: openai/x\n      api_base: os.environ/RELAY_BASE", "${RELAY_BASE}/chat/completions exact openai"},
		{"model: claude-3-5-haiku", "https://api.anthropic.com anthropic"},
		{"model: anthropic/x\n      api_base: https://r.example.com/v1/messages", "https://r.example.com/v1/messages exact anthropic"},
		{"model: gemini/gemini-2.5-pro", "https://generativelanguage.googleapis.com gemini"},
		{"model: groq/llama-3.3-70b", "https://api.groq.com/openai/v1 openai"},
		{"model: ollama/llama3", "http://localhost:11434 openai"},
		{"model: azure/dep-1\n      api_base: https://acme.openai.azure.com/\n      api_version: '2024-10-21'",
			"https://acme.openai.azure.com/openai/deployments/dep-1/chat/completions?api-version=2024-10-21 exact openai"},
		{"model: azure/dep-1", "${AZURE_API_BASE}/openai/deployments/dep-1/chat/completions?api-version=${AZURE_API_VERSION} exact openai"},
		{"model: azure/dep-1\n      api_base: https://acme.openai.azure.com/openai/v1", "https://acme.openai.azure.com/openai/v1 openai"},
		{"model: somecloud/x\n      api_base: https://some.example.com/v1\n      api_key: k", "https://some.example.com/v1 openai"},
		{"model: somecloud/x\n      api_base: https://some.example.com/v1", ""}, // no key known
		{"model: vertex_ai/gemini-2.5-pro", ""},
		{"model: somecloud/x", ""},
	}
	for _, tt := range tests {
		cfg := readLiteLLM(t, "model_list:\n  - model_name: m\n    litellm_params:\n      "+tt.params+"\n")
		ch := cfg.Channels[0]
		if got := urlOf(ch); got != tt.want {
			t.Errorf("%s:\n  url  %q\n  want %q", tt.params, got, tt.want)
		}
		if ch.Disabled != (tt.want == "") {
			t.Errorf("%s: disabled = %v", tt.params, ch.Disabled)
		}
	}
}

func TestLiteLLMKeys(t *testing.T) {
	cfg := readLiteLLM(t, `model_list:
  - model_name: a
    litellm_params: {model: openai/a, api_key: os.environ/MY_KEY}
  - model_name: b
    litellm_params: {model: anthropic/b}
  - model_name: c
    litellm_params: {model: azure/c, api_base: "https://acme.openai.azure.com", api_version: v, api_key: "az-literal-1"}
  - model_name: d
    litellm_params:
      model: hosted_vllm/d
      api_base: "http://gpu:8000/v1"
      extra_headers: {X-Team: ml, "bad header": x, Authorization: "Bearer hdr-secret"}
`)
	want := []Value{Env("MY_KEY"), Env("ANTHROPIC_API_KEY"), SecretValue("az-literal-1"), Lit("none")}
	for i, ch := range cfg.Channels {
		if len(ch.Keys) != 1 || ch.Keys[0] != want[i] {
			t.Errorf("%s: keys %+v, want %+v", ch.Name, ch.Keys, want[i])
		}
	}
	// Azure: one secret, one variable, used by the key and the api-key header.
	res, err := Render(cfg, "c.yaml", EnvSecrets)
	if err != nil {
		t.Fatal(err)
	}
	out := string(res.YAML)
	if len(res.Env) != 2 || res.Env[0] != (EnvVar{"C_AZURE_KEY_1", "az-literal-1"}) {
		t.Errorf("env = %+v", res.Env)
	}
	if strings.Contains(out, "az-literal-1") || strings.Count(out, "${C_AZURE_KEY_1}") != 2 {
		t.Errorf("the Azure key is not one reference used twice:\n%s", out)
	}
	// extra_headers: a bad name is a note, a credential header a secret.
	d := cfg.Channels[3]
	if len(d.Headers) != 2 || d.Headers[0].Value != Lit("ml") || !d.Headers[1].Value.IsSecret() || len(d.Notes) != 1 {
		t.Errorf("headers %+v, notes %q", d.Headers, d.Notes)
	}
	if strings.Contains(out, "hdr-secret") || !strings.Contains(out, "${D_HOSTED_VLLM_HEADER_2}") {
		t.Errorf("the Authorization header is not a reference:\n%s", out)
	}
	if err := Validate("c.yaml", res.YAML); err != nil {
		t.Error(err)
	}
}

func TestLiteLLMRouter(t *testing.T) {
	tests := []struct {
		router string
		want   map[string]string
	}{
		{"num_retries: 0\ntimeout: 1.5\ncooldown_time: 5", map[string]string{
			"routing.max_attempts": "1", "routing.timeouts.non_stream": "1s500ms",
			"routing.cooldown.auth": "5s", "routing.cooldown.min": "5s"}},
		{"cooldown_time: 7200", map[string]string{"routing.cooldown.server": "2h", "routing.cooldown.max": "2h"}},
	}
	for _, tt := range tests {
		cfg := readLiteLLM(t, "model_list:\n  - {model_name: m, litellm_params: {model: openai/m}}\nrouter_settings:\n  "+
			strings.ReplaceAll(tt.router, "\n", "\n  ")+"\n")
		got := map[string]string{}
		for _, s := range cfg.Settings {
			got[strings.Join(s.Path, ".")] = fmt.Sprint(s.Value)
		}
		for k, v := range tt.want {
			if got[k] != v {
				t.Errorf("%q: %s = %q, want %q (all: %v)", tt.router, k, got[k], v, got)
			}
		}
		res, err := Render(cfg, "c.yaml", KeepSecrets)
		if err != nil {
			t.Fatal(err)
		}
		snap, err := config.Parse("c.yaml", res.YAML, PlaceholderEnv())
		if err != nil {
			t.Fatalf("%q: %v", tt.router, err)
		}
		if c := snap.Routing.Cooldown; c.Min > c.Auth || c.Max < c.Auth {
			t.Errorf("%q: cooldown %v outside [%v, %v]", tt.router, c.Auth, c.Min, c.Max)
		}
	}
}

func TestLiteLLMSkips(t *testing.T) {
	cfg := readLiteLLM(t, `model_list:
  - model_name: "*"
    litellm_params: {model: "openai/*"}
  - model_name: emb
    litellm_params: {model: openai/text-embedding-3-small}
    model_info: {mode: embedding}
  - model_name: ok
    litellm_params: {model: openai/ok}
  - litellm_params: {model: openai/x}
general_settings:
  master_key: sk-TESTKEY-master
environment_variables:
  SECRET_THING: sk-TESTKEY-env
`)
	if len(cfg.Channels) != 1 || cfg.Channels[0].Name != "ok-openai" {
		t.Errorf("channels = %v", cfg.Channels)
	}
	notes := strings.Join(cfg.Notes, "\n")
	for _, want := range []string{`"*" skipped`, "mode embedding", "model_list[3] skipped", "master_key", "SECRET_THING"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if strings.Contains(notes, "TESTKEY") {
		t.Errorf("notes show a secret:\n%s", notes)
	}
}

func TestLiteLLMErrors(t *testing.T) {
	for _, in := range []string{"", "model_list: []\n", "router_settings: {}\n", "model_list: [\n", "- a\n- b\n"} {
		if _, err := ReadLiteLLM([]byte(in)); err == nil {
			t.Errorf("ReadLiteLLM(%q) = nil error", in)
		}
	}
}
