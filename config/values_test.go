package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

func TestParseDuration(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		str  string // String(), "" = same as in
	}{
		{"90s", 90 * time.Second, "1m30s"},
		{"5m", 5 * time.Minute, ""},
		{"1h30m", 90 * time.Minute, ""},
		{"7d", 7 * 24 * time.Hour, ""},
		{"1d12h", 36 * time.Hour, ""},
		{"0s", 0, ""},
		{"0", 0, "0s"},
		{"500ms", 500 * time.Millisecond, ""},
		{"120s", 2 * time.Minute, "2m"},
		{"1h0m1s", time.Hour + time.Second, "1h1s"},
	} {
		d, err := ParseDuration(tc.in)
		if err != nil || d.D() != tc.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", tc.in, d.D(), err, tc.want)
			continue
		}
		str := tc.str
		if str == "" {
			str = tc.in
		}
		if d.String() != str {
			t.Errorf("Duration(%v).String() = %q, want %q", tc.want, d.String(), str)
		}
		if back, err := ParseDuration(d.String()); err != nil || back != d {
			t.Errorf("round trip of %q: %v, %v", d.String(), back, err)
		}
	}
	for _, bad := range []string{"", "5", "300", "5 minutes", "-2m", "+5m", "1.5d", "d", "7dd", "1d-5m", "x7d", "2m30", "1w"} {
		if d, err := ParseDuration(bad); err == nil {
			t.Errorf("ParseDuration(%q) = %v, want an error", bad, d)
		}
	}
}

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		str  string
	}{
		{"10MiB", 10 << 20, "10MiB"},
		{"512KiB", 512 << 10, "512KiB"},
		{"1MB", 1000000, "1MB"},
		{"1kB", 1000, "1kB"},
		{"1KB", 1000, "1kB"},
		{"2GiB", 2 << 30, "2GiB"},
		{"1TB", 1e12, "1TB"},
		{"1048576", 1 << 20, "1MiB"},
		{"123", 123, "123B"},
		{"123B", 123, "123B"},
		{"1.5MiB", 3 << 19, "1536KiB"},
		{"10 MiB", 10 << 20, "10MiB"},
		{"0", 0, "0B"},
	} {
		z, err := ParseSize(tc.in)
		if err != nil || int64(z) != tc.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tc.in, z, err, tc.want)
			continue
		}
		if z.String() != tc.str {
			t.Errorf("Size(%d).String() = %q, want %q", z, z.String(), tc.str)
		}
	}
	for _, bad := range []string{"", "MiB", "-5MiB", "10 megabytes", "1.5", "10mib", "1e3", "99999999999TiB", "0x10"} {
		if z, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", bad, z)
		}
	}
}

func TestFingerprint(t *testing.T) {
	for in, want := range map[string]string{
		"":                             "",
		"sk-ant-api03-abcdefghijkf3c9": "sk-a…f3c9",
		"123456789012":                 "1234…9012",
		"12345678901":                  "…01",
		"abcd":                         "…cd",
		"abc":                          "…",
		"ключ-секрет-значение":         "ключ…ение", // runes, not bytes
	} {
		if got := Fingerprint(in); got != want {
			t.Errorf("Fingerprint(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestSecretNeverPrinted: every way a Secret can be printed or encoded
// shows the fingerprint only, also inside structs.
func TestSecretNeverPrinted(t *testing.T) {
	const value = "sk-ant-api03-VERYSECRETVALUE-f3c9"
	s := Secret(value)
	srv := Server{Listen: ":1", AdminPassword: s}
	var outs []string
	for _, verb := range []string{"%s", "%v", "%+v", "%#v", "%q", "%x", "%X", "%d", "%10s", "%-20v"} {
		outs = append(outs, fmt.Sprintf(verb, s), fmt.Sprintf(verb, srv), fmt.Sprintf(verb, &srv))
	}
	outs = append(outs, fmt.Sprint(s), fmt.Sprintln([]Secret{s}), s.String(), s.GoString())
	j, _ := json.Marshal(map[string]any{"s": s, "srv": srv, "list": []Secret{s}})
	y, _ := yaml.Marshal(map[string]any{"s": s, "srv": srv})
	outs = append(outs, string(j), string(y))
	var logs bytes.Buffer
	slog.New(slog.NewTextHandler(&logs, nil)).Info("m", "s", s, "srv", srv)
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("m", "s", s, "srv", srv)
	outs = append(outs, logs.String())
	for _, o := range outs {
		if strings.Contains(o, "VERYSECRET") {
			t.Errorf("secret leaked: %s", o)
		}
	}
	if !strings.Contains(string(j), `"s":"sk-a…f3c9"`) {
		t.Errorf("JSON = %s", j)
	}
	if s.Reveal() != value {
		t.Error("Reveal must return the value")
	}
}

// TestSnapshotJSONHasNoSecrets: the whole example snapshot, as the admin
// API might send it, holds no key.
func TestSnapshotJSONHasNoSecrets(t *testing.T) {
	data, err := os.ReadFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse("x", data, Env{})
	if err != nil {
		t.Fatal(err)
	}
	j, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range s.Channels {
		for _, k := range c.Keys {
			if bytes.Contains(j, []byte(k.Reveal())) {
				t.Errorf("key of %s leaked into JSON", c.Name)
			}
		}
	}
}

func TestParseHours(t *testing.T) {
	for in, want := range map[string]Hours{
		"08:00-22:00": {480, 1320},
		"22:00-06:00": {1320, 360},
		"8:30-9:00":   {510, 540},
		"00:00-24:00": {0, 1440},
	} {
		h, err := ParseHours(in)
		if err != nil || *h != want {
			t.Errorf("ParseHours(%q) = %v, %v; want %v", in, h, err, want)
		}
	}
	for _, bad := range []string{"", "8-22", "08:00", "08:00-08:00", "24:00-08:00", "08:60-09:00", "08:00-24:01", "a:bc-08:00", "08:0-09:00"} {
		if h, err := ParseHours(bad); err == nil {
			t.Errorf("ParseHours(%q) = %v, want an error", bad, h)
		}
	}
}

func TestHoursContains(t *testing.T) {
	at := func(h, m int) time.Time { return time.Date(2026, 11, 30, h, m, 0, 0, time.Local) }
	day := &Hours{Start: 8 * 60, End: 22 * 60}
	night := &Hours{Start: 22 * 60, End: 6 * 60}
	for _, tc := range []struct {
		h    *Hours
		t    time.Time
		want bool
	}{
		{day, at(8, 0), true}, // start inclusive
		{day, at(21, 59), true},
		{day, at(22, 0), false}, // end exclusive
		{day, at(7, 59), false},
		{night, at(23, 0), true},
		{night, at(0, 0), true},
		{night, at(5, 59), true},
		{night, at(6, 0), false},
		{night, at(12, 0), false},
		{&Hours{0, 1440}, at(23, 59), true},
		{nil, at(3, 0), true}, // no active_hours: always
	} {
		if got := tc.h.Contains(tc.t); got != tc.want {
			t.Errorf("%v.Contains(%s) = %v, want %v", tc.h, tc.t.Format("15:04"), got, tc.want)
		}
	}
	// The wall clock is read in local time, whatever zone t carries.
	utc := at(12, 0).UTC()
	if day.Contains(utc) != day.Contains(utc.Local()) {
		t.Error("Contains must use local time")
	}
}

func TestTokenRules(t *testing.T) {
	tok := &Token{Models: []string{"claude-*", "gpt-5*"}, Channels: ChannelRule{Deny: []string{"expensive"}}}
	for model, want := range map[string]bool{
		"claude-sonnet-4-6": true, "gpt-5": true, "gpt-5-mini": true, "gpt-4o": false, "gemini-3": false,
		"claude-x/y": false, // path.Match: * does not cross /
	} {
		if got := tok.AllowsModel(model); got != want {
			t.Errorf("AllowsModel(%q) = %v, want %v", model, got, want)
		}
	}
	if !(&Token{}).AllowsModel("anything") {
		t.Error("no globs must allow every model")
	}
	if tok.AllowsChannel("expensive") || !tok.AllowsChannel("cheap") {
		t.Error("deny list wrong")
	}
	allow := &Token{Channels: ChannelRule{Allow: []string{"a"}}}
	if !allow.AllowsChannel("a") || allow.AllowsChannel("b") {
		t.Error("allow list wrong")
	}
	if !(&Token{}).AllowsChannel("x") {
		t.Error("no rule must allow every channel")
	}
	exp := &Token{Expires: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)}
	if exp.Expired(exp.Expires.Add(-time.Second)) || !exp.Expired(exp.Expires) || (&Token{}).Expired(time.Now()) {
		t.Error("Expired wrong")
	}
}

// TestFullFile checks that every option of testdata/good/full.yaml lands
// in its field.
func TestFullFile(t *testing.T) {
	data, err := os.ReadFile("testdata/good/full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse("full.yaml", data, corpusEnv())
	if err != nil {
		t.Fatal(err)
	}
	if s.Server.Listen != "0.0.0.0:9000" || s.Server.AdminPassword.Reveal() != "correct horse battery staple" || s.Server.MaxBodyBytes != 512<<10 {
		t.Errorf("server = %+v", s.Server)
	}
	if s.Storage.Driver != DriverPostgres || !strings.HasPrefix(s.Storage.DSN.Reveal(), "postgres://") || s.Storage.LogRetention.D() != 30*24*time.Hour || !s.Storage.Shared {
		t.Errorf("storage = %+v", s.Storage)
	}
	wantRouting := Routing{
		Cooldown:    Cooldown{Auth: Duration(10 * time.Minute), RateLimit: Duration(30 * time.Second), Server: Duration(time.Minute), Timeout: Duration(45 * time.Second), Min: Duration(5 * time.Second), Max: Duration(time.Hour), Fallback: false},
		Timeouts:    Timeouts{FirstByte: Duration(15 * time.Second), NonStream: Duration(5 * time.Minute), Stream: Duration(90 * time.Minute), Request: Duration(10 * time.Minute)},
		MaxAttempts: 3,
		HealthScore: HealthScore{Enabled: false, Window: Duration(time.Hour), MinSamples: 5, Penalty: 50.5},
		Unpriced:    UnpricedAllow,
		Affinity:    Affinity{Enabled: false, TTL: Duration(30 * time.Minute), MaxSessions: 1000, MaxShare: 0.5},
	}
	if s.Routing != wantRouting {
		t.Errorf("routing = %+v\nwant %+v", s.Routing, wantRouting)
	}
	wantCatalog := PriceCatalog{URL: "https://models.dev/api.json", Refresh: Duration(12 * time.Hour), Proxy: "http://127.0.0.1:3128"}
	if s.PriceCatalog != wantCatalog {
		t.Errorf("price_catalog = %+v, want %+v", s.PriceCatalog, wantCatalog)
	}
	c := s.Channel("relay")
	if c.Affinity {
		t.Errorf("relay: affinity: false did not land")
	}
	if !c.Debug || s.Server.DebugMaxBytes != 1<<20 {
		t.Errorf("relay: debug %v, server.debug_max_bytes %d; want true, 1MiB", c.Debug, s.Server.DebugMaxBytes)
	}
	if c.Priority != -5 || c.Weight != 3 || c.KeyStrategy != KeySequential || c.RPMLimit != 120 || c.MaxConcurrency != 8 ||
		c.DailyCostLimit != 12.5 || c.Proxy != "socks5://127.0.0.1:1080" || c.CostMultiplier != 0.8 || !c.Enabled {
		t.Errorf("channel = %+v", c)
	}
	if len(c.URLs) != 3 || fmt.Sprint(c.URLs[0].Protocols) != "[anthropic responses]" || !c.URLs[1].Exact || c.URLs[2].URL != "http://10.0.0.7:8080" {
		t.Errorf("urls = %+v", c.URLs)
	}
	if len(c.Keys) != 2 || c.ActiveHours == nil || c.ActiveHours.String() != "22:00-06:00" {
		t.Errorf("keys/hours = %v %v", c.Keys, c.ActiveHours)
	}
	if c.Models[1] != (Model{Name: "claude-opus-4-6", Upstream: "claude-opus-4-6-20261001"}) || !c.Models[2].Disabled {
		t.Errorf("models = %+v", c.Models)
	}
	if got := fmt.Sprintf("%+v", c.Rewrite.Headers); got != "[{Action:override Name:User-Agent Value:my-agent/1.0} {Action:remove Name:X-Debug Value:}]" {
		t.Errorf("headers = %s", got)
	}
	body := c.Rewrite.Body
	if len(body) != 3 || string(body[0].Value) != "4096" || string(body[1].Value) != `{"user_id":"u-1","tags":["a",2,true,null,1.5]}` ||
		body[2].Action != ActionRemove || body[2].Value != nil {
		t.Errorf("body = %+v", body)
	}
	if c.Check == nil || c.Check.Model != "claude-opus-4-6-20261001" || c.Check.Every.D() != 5*time.Hour {
		t.Errorf("check = %+v", c.Check)
	}
	if p := s.Channel("parked"); p == nil || p.Enabled {
		t.Errorf("parked = %+v", p)
	}
	alice, bob := s.Tokens[0], s.Tokens[1]
	if alice.CostLimit != 100 || alice.MaxConcurrency != 4 || alice.RPMLimit != 60 || alice.AllowsChannel("parked") ||
		!alice.Expires.Equal(time.Date(2027, 1, 1, 0, 0, 0, 0, time.Local)) {
		t.Errorf("alice = %+v", alice)
	}
	if alice.Debug || !bob.Debug {
		t.Errorf("debug: alice %v, bob %v; want false, true", alice.Debug, bob.Debug)
	}
	if !bob.AllowsChannel("relay") || bob.AllowsChannel("parked") || !bob.Expires.Equal(time.Date(2027, 1, 1, 12, 0, 0, 0, time.UTC)) {
		t.Errorf("bob = %+v", bob)
	}
	if s.Pricing["my-local-model"] != (Price{0.2, 0.8, 0.02, 0.25}) || s.Pricing["free-model"] != (Price{}) {
		t.Errorf("pricing = %+v", s.Pricing)
	}
}

func TestAnchors(t *testing.T) {
	data, err := os.ReadFile("testdata/good/anchors.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse("anchors.yaml", data, Env{})
	if err != nil {
		t.Fatal(err)
	}
	two := s.Channel("two")
	if two == nil || two.Weight != 2 || two.URLs[0].URL != "https://two.example.com" || len(two.Models) != 2 || len(two.Keys) != 1 {
		t.Errorf("merged channel = %+v", two)
	}
	if len(s.Routes("claude-haiku-4-5")) != 3 {
		t.Errorf("routes = %+v", s.Routes("claude-haiku-4-5"))
	}
}

func TestUnknownKeySuggestion(t *testing.T) {
	for key, want := range map[string]string{
		"prority":   ` (did you mean "priority"?)`,
		"url":       ` (did you mean "urls"?)`,
		"key":       ` (did you mean "keys"?)`,
		"enable":    ` (did you mean "enabled"?)`,
		"Models":    ` (did you mean "models"?)`,
		"zzzzzzzzz": " (want one of: name, priority",
	} {
		if got := suggest(key, channelFields.keys()); !strings.HasPrefix(got, want) {
			t.Errorf("suggest(%q) = %q, want prefix %q", key, got, want)
		}
	}
}
