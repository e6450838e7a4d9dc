package convert

import (
	"bytes"
	"errors"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ccload/ccload/protocol"
)

func TestStreamTables(t *testing.T) {
	for _, f := range protocol.Families {
		if streamDecoders[f] == nil || streamEncoders[f] == nil {
			t.Errorf("%s: missing stream decoder or encoder", f)
		}
		if responseDecoders[f] == nil || responseEncoders[f] == nil {
			t.Errorf("%s: missing response decoder or encoder", f)
		}
		for _, to := range protocol.Families {
			s := NewStream(f, to, "m")
			_, pass := s.(*passStream)
			if pass != (f == to) {
				t.Errorf("NewStream(%s, %s): pass-through = %v", f, to, pass)
			}
		}
	}
	if err := NewStream("nope", protocol.OpenAI, "m").Close(func([]byte) {}); err == nil {
		t.Error("unknown family: no error")
	}
}

// TestStreamUsage checks Usage() of every converted stream, UsageOf on every
// non-stream fixture and UsageTracker on every native stream against the
// numbers written in sdkCases.
func TestStreamUsage(t *testing.T) {
	for _, from := range protocol.Families {
		for name, in := range corpusCases(t, from, ".sse") {
			want, ok := sdkCases[name]
			if !ok {
				continue
			}
			wu := want.usage[from]
			tr := NewUsageTracker(from)
			r := protocol.NewReader(bytes.NewReader(in), 0)
			for {
				ev, err := r.Next()
				if err != nil {
					break
				}
				tr.Observe(ev)
			}
			if got := noTier(tr.Usage()); got != wu {
				t.Errorf("%s/%s UsageTracker = %+v, want %+v", from, name, got, wu)
			}
			for _, to := range protocol.Families {
				s := newStream(from, to, "m", StreamOptions{}, testClock{})
				r := protocol.NewReader(bytes.NewReader(in), 0)
				for {
					ev, err := r.Next()
					if err != nil {
						break
					}
					_ = s.Event(ev, func([]byte) {})
				}
				_ = s.Close(func([]byte) {})
				if got := noTier(s.Usage()); got != wu {
					t.Errorf("%s-%s/%s Stream.Usage = %+v, want %+v", from, to, name, got, wu)
				}
			}
		}
		for name, in := range corpusCases(t, from, ".json") {
			if want, ok := sdkCases[name]; ok {
				if got := noTier(UsageOf(from, in)); got != want.usage[from] {
					t.Errorf("%s/%s UsageOf = %+v, want %+v", from, name, got, want.usage[from])
				}
			}
		}
	}
	if got := UsageOf(protocol.Gemini, []byte("garbage")); got != (Usage{}) {
		t.Errorf("UsageOf(garbage) = %+v", got)
	}
}

func TestUsageOfCutStream(t *testing.T) {
	// A stream cut short still reports what it saw: Anthropic's input at
	// message_start.
	in := corpusCases(t, protocol.Anthropic, ".sse")["text"]
	s := NewStream(protocol.Anthropic, protocol.OpenAI, "m")
	r := protocol.NewReader(bytes.NewReader(in), 0)
	ev, _ := r.Next()
	_ = s.Event(ev, func([]byte) {})
	if got := s.Usage(); got.Input != 25 {
		t.Errorf("Usage after message_start = %+v, want Input 25", got)
	}
}

func TestOmitChatUsage(t *testing.T) {
	in := corpusCases(t, protocol.Anthropic, ".sse")["text"]
	out, err := runStream(t, protocol.Anthropic, protocol.OpenAI, in, StreamOptions{OmitChatUsage: true})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out, []byte(`"usage"`)) || !bytes.HasSuffix(out, []byte("data: [DONE]\n\n")) {
		t.Fatalf("usage chunk sent or [DONE] missing:\n%s", out)
	}
	checkGrammar(t, protocol.OpenAI, out)
}

func TestPassThrough(t *testing.T) {
	in := corpusCases(t, protocol.OpenAI, ".sse")["cache_usage"]
	s := NewStream(protocol.OpenAI, protocol.OpenAI, "m")
	var out []byte
	r := protocol.NewReader(bytes.NewReader(in), 0)
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err := s.Event(ev, func(b []byte) { out = append(out, b...) }); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(out, in) {
		t.Fatal("pass-through changed the stream")
	}
	if got := noTier(s.Usage()); got != sdkCases["cache_usage"].usage[protocol.OpenAI] {
		t.Fatalf("pass-through usage = %+v", got)
	}
}

// TestStreamStopsAfterError checks that nothing follows the error event:
// later events and Close emit nothing and return nil.
func TestStreamStopsAfterError(t *testing.T) {
	s := NewStream(protocol.Gemini, protocol.Anthropic, "m")
	var out []byte
	emit := func(b []byte) { out = append(out, b...) }
	err := s.Event(&protocol.Event{Data: []byte(`{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED"}}`)}, emit)
	var se *StreamError
	if !errors.As(err, &se) || se.Status != 429 || se.Message != "quota" {
		t.Fatalf("err = %v", err)
	}
	n := len(out)
	if s.Event(&protocol.Event{Data: []byte(`{"candidates":[]}`)}, emit) != nil || s.Close(emit) != nil || len(out) != n {
		t.Fatal("output or error after the error event")
	}
	if gjson.GetBytes(bytes.TrimPrefix(bytes.TrimSpace(bytes.SplitN(out, []byte("data: "), 2)[1]), nil), "error.type").Str != "rate_limit_error" {
		t.Fatalf("client error event = %s", out)
	}
}

func TestConvertError(t *testing.T) {
	cases := []struct {
		name   string
		from   protocol.Family
		to     protocol.Family
		status int
		body   string
		want   string
	}{
		{"anthropic overloaded to openai", protocol.Anthropic, protocol.OpenAI, 529,
			`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_1"}`,
			`{"error":{"message":"Overloaded","type":"server_error","param":null,"code":null}}`},
		{"openai rate limit to anthropic", protocol.OpenAI, protocol.Anthropic, 429,
			`{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}`,
			`{"type":"error","error":{"type":"rate_limit_error","message":"Rate limit reached"}}`},
		{"gemini array-wrapped to responses", protocol.Gemini, protocol.Responses, 400,
			`[{"error":{"code":400,"message":"API key not valid.","status":"INVALID_ARGUMENT"}}]`,
			`{"error":{"message":"API key not valid.","type":"invalid_request_error","param":null,"code":null}}`},
		{"responses auth to gemini", protocol.Responses, protocol.Gemini, 401,
			`{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
			`{"error":{"code":401,"message":"Incorrect API key provided.","status":"UNAUTHENTICATED"}}`},
		{"html page to anthropic", protocol.OpenAI, protocol.Anthropic, 502,
			"<html><body>Bad Gateway</body></html>\n",
			`{"type":"error","error":{"type":"api_error","message":"Bad Gateway: <html><body>Bad Gateway</body></html>"}}`},
		{"empty body to gemini", protocol.Anthropic, protocol.Gemini, 503, "",
			`{"error":{"code":503,"message":"Service Unavailable","status":"UNAVAILABLE"}}`},
		{"plain string error", protocol.OpenAI, protocol.Anthropic, 400, `{"error":"model is required"}`,
			`{"type":"error","error":{"type":"invalid_request_error","message":"model is required"}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := ConvertError(c.from, c.to, c.status, []byte(c.body))
			g, err := canonData(got)
			if err != nil {
				t.Fatalf("not JSON: %s", got)
			}
			w, _ := canonData([]byte(c.want))
			if g != w {
				t.Fatalf("got  %s\nwant %s", got, c.want)
			}
		})
	}
	// Garbage is bounded and stays valid JSON.
	huge := append(bytes.Repeat([]byte("\xff<x>"), 10000), 0)
	got := ConvertError(protocol.OpenAI, protocol.Anthropic, 500, huge)
	if !gjson.ValidBytes(got) || len(got) > 2*maxErrorMessage+200 {
		t.Fatalf("garbage: %d bytes, valid=%v", len(got), gjson.ValidBytes(got))
	}
}

func TestGeminiCallID(t *testing.T) {
	ok := regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	for _, name := range []string{"get_weather", "ns.tool:v2", strings.Repeat("x", 200), "", "名前"} {
		id := GeminiCallID(name, 3)
		if !ok.MatchString(id) || id != GeminiCallID(name, 3) || id == GeminiCallID(name, 4) {
			t.Errorf("GeminiCallID(%q, 3) = %q", name, id)
		}
	}
	if got := GeminiCallID("get_weather", 0); got != "call_0_get_weather" {
		t.Errorf("GeminiCallID = %q", got)
	}
}

func TestGeminiThoughtSignature(t *testing.T) {
	for sig, want := range map[string]bool{
		"EqQBCkYIBxgCKkBB+/==": true,  // Anthropic: standard base64, sent as it is
		"CiQB0e2K":             true,  // Gemini's own
		"gAAAAABpVVoh-_x":      false, // Responses encrypted_content: URL-safe alphabet
		"abc":                  false,
		"":                     false,
	} {
		got, ok := GeminiThoughtSignature(sig)
		if ok != want || ok && got != sig {
			t.Errorf("GeminiThoughtSignature(%q) = %q, %v", sig, got, ok)
		}
	}
}

func TestWjStr(t *testing.T) {
	for _, s := range []string{"", "plain", "q\"b\\s", "\n\r\t\x00\x1f", "<&>", "ü€😀", "bad\xffutf8", "\u2028"} {
		lit := wjStr(nil, s)
		r := gjson.ParseBytes(lit)
		want := strings.ToValidUTF8(s, "\uFFFD")
		if !gjson.ValidBytes(lit) || r.Str != want {
			t.Errorf("wjStr(%q) = %s (decodes to %q)", s, lit, r.Str)
		}
	}
}

func TestResponseRejectsUnreadable(t *testing.T) {
	for _, body := range []string{"", "not json", `[1,2]`, `{"error":{"message":"boom"}}`} {
		if _, err := Response(protocol.OpenAI, protocol.Anthropic, []byte(body), "m"); !errors.Is(err, ErrUpstreamBody) {
			t.Errorf("Response(%q) err = %v, want ErrUpstreamBody", body, err)
		}
	}
	bad := `{"content":[{"type":"tool_use","id":"t","name":"f","input":"not an object"}],"stop_reason":"tool_use"}`
	if _, err := Response(protocol.Anthropic, protocol.OpenAI, []byte(bad), "m"); !errors.Is(err, ErrUpstreamBody) {
		t.Errorf("tool input not an object: err = %v", err)
	}
}

func TestLitField(t *testing.T) {
	obj := ` { "a" : 1, "n":{"text":"no"}, "arr":[1,"x]",{"b":"}"}], "text" : "hi \"there\"\n", "z":"last", "t":true } `
	for key, want := range map[string]string{"text": `"hi \"there\"\n"`, "z": `"last"`, "a": "", "n": "", "t": "", "missing": ""} {
		if got := litField(obj, key); got != want {
			t.Errorf("litField(%q) = %q, want %q", key, got, want)
		}
	}
	for _, bad := range []string{"", "[]", `"s"`, `{"a"`, `{"a":"unterminated`, `{"a" "b"}`, `{"a":1 "b":"c"}`} {
		_ = litField(bad, "b") // must not panic
	}
	if litField(`{"text":"a","text":"b"}`, "text") != `"a"` {
		t.Error("duplicate key: want the first, as gjson")
	}
}
