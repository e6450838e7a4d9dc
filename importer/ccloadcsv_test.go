package importer

import (
	"strings"
	"testing"
)

func readCSV(t *testing.T, csv string) *Config {
	t.Helper()
	cfg, err := ReadCCLoadCSV([]byte(csv))
	if err != nil {
		t.Fatalf("ReadCCLoadCSV: %v", err)
	}
	return cfg
}

func modelsOf(ch *Channel) string {
	var parts []string
	for _, m := range ch.Models {
		s := m.Name
		if m.Upstream != "" {
			s += "->" + m.Upstream
		}
		if m.Disabled {
			s += "(off)"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

func TestCSVKeys(t *testing.T) {
	cfg := readCSV(t, "name,api_key,urls,models\n"+
		`r,"k1, k2`+"\n"+`k3,,k1",https://r.example.com,m`+"\n")
	ch := cfg.Channels[0]
	var got []string
	for _, k := range ch.Keys {
		got = append(got, k.Secret)
	}
	if strings.Join(got, " ") != "k1 k2 k3" {
		t.Errorf("keys = %q, want k1 k2 k3", got)
	}
	if len(ch.Notes) != 1 || !strings.Contains(ch.Notes[0], "key 4 is the same as an earlier key") {
		t.Errorf("notes = %q", ch.Notes)
	}
	if strings.Contains(strings.Join(ch.Notes, " "), "k1") {
		t.Errorf("a note shows a key: %q", ch.Notes)
	}
	if ch.KeyStrategy != "sequential" {
		t.Errorf("key_strategy = %q, want ccLoad's default sequential", ch.KeyStrategy)
	}
}

func TestCSVModels(t *testing.T) {
	tests := []struct {
		header, models, redirects, want string
	}{
		// hand-made sheet: public:upstream renames, version tags are not
		{"models", "sonnet:claude-sonnet-4-6; qwen2.5:7b | llama3:latest\ngpt-5", "", "sonnet->claude-sonnet-4-6 qwen2.5:7b llama3:latest gpt-5"},
		// ccLoad export: names are literal, renames come from model_redirects
		{"models,model_redirects", "a:b,c", `{"c":"c-2026"}`, "a:b c->c-2026"},
		{"models", `["x", {"model":"y","redirect_model":"y-up"}, {"name":"z","disabled":true}]`, "", "x y->y-up z(off)"},
		{"models", `{"pub":"up","same":"same"}`, "", "pub->up same"},
		{"models", "a,b,a", "", "a b"},
	}
	for _, tt := range tests {
		csv := "name,urls," + tt.header + "\nr,https://r.example.com," + quote(tt.models)
		if strings.Contains(tt.header, "model_redirects") {
			csv += "," + quote(tt.redirects)
		}
		cfg := readCSV(t, csv+"\n")
		if got := modelsOf(cfg.Channels[0]); got != tt.want {
			t.Errorf("models %q (%s) = %q, want %q", tt.models, tt.header, got, tt.want)
		}
	}
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func TestCSVURLs(t *testing.T) {
	tests := []struct{ cell, channelType, want string }{
		{`[{"url":"https://a.example.com/v1/responses","exact":true,"protocols":["codex","openai","codex"]}]`, "", "https://a.example.com/v1/responses exact [responses openai]"},
		{`["https://a.example.com","https://b.example.com"]`, "", "https://a.example.com [] | https://b.example.com []"},
		{"https://a.example.com/v1/messages#\nhttps://b.example.com", "anthropic", "https://a.example.com/v1/messages exact [anthropic] | https://b.example.com [anthropic]"},
		{"https://a.example.com, ftp://x, https://a.example.com", "codex", "https://a.example.com [responses]"},
		{`[{"url":"https://a.example.com","protocols":["claude","smoke"]}]`, "", "https://a.example.com [anthropic]"},
	}
	for _, tt := range tests {
		var notes rowNotes
		var parts []string
		for _, u := range parseURLCell(tt.cell, tt.channelType, &notes) {
			s := u.URL.Text
			if u.Exact {
				s += " exact"
			}
			parts = append(parts, s+" ["+strings.Join(u.Protocols, " ")+"]")
		}
		if got := strings.Join(parts, " | "); got != tt.want {
			t.Errorf("urls %q = %q, want %q (notes %q)", tt.cell, got, tt.want, notes)
		}
	}
	var notes rowNotes
	parseURLCell("https://user:hunter2@[bad", "", &notes)
	if len(notes) != 1 || strings.Contains(notes[0], "hunter2") {
		t.Errorf("a bad URL's note = %q, want one note without the URL", notes)
	}
}

func TestCSVHeaders(t *testing.T) {
	cfg := readCSV(t, "\ufeff名称,API Key,地址,优先级,模型,状态,Model-Redirects,策略,RPM限制,extra\n"+
		"主力,\"k1\nk2\",https://r.example.com,7,m1,禁用,{},round_robin,30,x\n")
	ch := cfg.Channels[0]
	if ch.Priority != 7 || len(ch.Keys) != 2 || !ch.Disabled || ch.KeyStrategy != "round_robin" || ch.RPMLimit != 30 || modelsOf(ch) != "m1" {
		t.Errorf("channel = %+v", ch)
	}
	if !strings.HasPrefix(ch.Name, "channel-") {
		t.Errorf("name of 主力 = %q, want channel-<hash>", ch.Name)
	}
	if len(cfg.Notes) != 1 || !strings.Contains(cfg.Notes[0], `"extra"`) {
		t.Errorf("file notes = %q, want one about the extra column", cfg.Notes)
	}
}

func TestCSVDisablesWhatCannotRoute(t *testing.T) {
	cfg := readCSV(t, "name,api_key,urls,models,auth_type,oauth_credential\n"+
		"no-key,,https://r.example.com,m,,\n"+
		`oauth,,https://r.example.com,m,codex_oauth,"{""refresh_token"":""rt-secret""}"`+"\n"+
		`grok,,https://api.x.ai/v1,m,xai_oauth,"{""refresh_token"":""rt-secret""}"`+"\n"+
		"bad-url,k,not a url,m,,\n")
	for _, ch := range cfg.Channels {
		if ch.OAuth == "codex" {
			// A ChatGPT account channel: enabled, its account waits for
			// `ccload login`, which the note names.
			if ch.Disabled || len(ch.Accounts) != 1 || len(ch.Notes) == 0 || !strings.Contains(ch.Notes[0], "ccload login codex --channel "+ch.Name) {
				t.Errorf("%s: disabled=%v accounts=%v notes=%q", ch.Name, ch.Disabled, ch.Accounts, ch.Notes)
			}
		} else if ch.OAuth == "xai" {
			// No client id to sign in with yet: disabled, the note says
			// to set it and names the login.
			if !ch.Disabled || len(ch.Accounts) != 1 || len(ch.Notes) == 0 || !strings.Contains(ch.Notes[0], "oauth_client_id") ||
				!strings.Contains(ch.Notes[0], "ccload login xai --channel "+ch.Name) {
				t.Errorf("%s: disabled=%v accounts=%v notes=%q", ch.Name, ch.Disabled, ch.Accounts, ch.Notes)
			}
		} else if !ch.Disabled || len(ch.Notes) == 0 {
			t.Errorf("%s: disabled=%v notes=%q, want disabled with a reason", ch.Name, ch.Disabled, ch.Notes)
		}
		for _, n := range ch.Notes {
			if strings.Contains(n, "rt-secret") {
				t.Errorf("%s: a note shows the OAuth credential: %q", ch.Name, n)
			}
		}
	}
	res, err := Render(cfg, "x.csv", KeepSecrets)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(res.YAML), "rt-secret") {
		t.Errorf("the output has the OAuth credential:\n%s", res.YAML)
	}
	if err := Validate("x.yaml", res.YAML); err != nil {
		t.Errorf("does not load: %v", err)
	}
}

func TestCSVErrors(t *testing.T) {
	for _, in := range []string{"", "name,models\nx,m\n", "api_key,urls\nk,https://x\n", "name,urls\n", "name,urls\n\"x,https://x\n"} {
		if _, err := ReadCCLoadCSV([]byte(in)); err == nil {
			t.Errorf("ReadCCLoadCSV(%q) = nil error", in)
		}
	}
}
