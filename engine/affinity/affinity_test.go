package affinity

import (
	"net/http"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ccload/ccload/protocol"
)

func TestIdentifyOrder(t *testing.T) {
	cases := []struct {
		name   string
		fam    protocol.Family
		header map[string]string
		body   string
		want   Identity
	}{
		{"cache key beats headers", protocol.Responses, map[string]string{"session-id": "s1"},
			`{"prompt_cache_key":"k1","input":"hi"}`, Identity{"k1", SourceCacheKey}},
		{"claude header", protocol.Anthropic, map[string]string{"X-Claude-Code-Session-Id": "c1"},
			`{"metadata":{"user_id":"user_ab_account_x_session_u1"},"messages":[{"role":"user","content":"hi"}]}`, Identity{"c1", SourceClaudeHeader}},
		{"claude user_id, JSON form", protocol.Anthropic, nil,
			`{"metadata":{"user_id":"{\"device_id\":\"d\",\"session_id\":\"u2\"}"},"messages":[{"role":"user","content":"hi"}]}`, Identity{"u2", SourceClaudeUserID}},
		{"claude user_id, legacy form", protocol.Anthropic, nil,
			`{"metadata":{"user_id":"user_ab_account_x_session_u3"},"messages":[{"role":"user","content":"hi"}]}`, Identity{"u3", SourceClaudeUserID}},
		{"thread before session", protocol.Responses, map[string]string{"session-id": "s1", "thread-id": "t1"},
			`{"input":"hi"}`, Identity{"t1", SourceThreadHeader}},
		{"session header", protocol.Responses, map[string]string{"session-id": "s1"},
			`{"input":"hi"}`, Identity{"s1", SourceSessionHeader}},
		{"openai user", protocol.OpenAI, nil,
			`{"user":"u9","messages":[{"role":"user","content":"hi"}]}`, Identity{"u9", SourceUser}},
		{"prompt_cache_key ignored outside OpenAI families", protocol.Anthropic, nil,
			`{"prompt_cache_key":"k","messages":[]}`, Identity{}},
	}
	for _, c := range cases {
		h := http.Header{}
		for k, v := range c.header {
			h.Set(k, v)
		}
		got := Identify(c.fam, h.Get, Members([]byte(c.body)))
		if got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}

// The fingerprint stays while a conversation grows and differs between
// conversations.
func TestFingerprintStableOverTurns(t *testing.T) {
	none := func(string) string { return "" }
	turn1 := `{"systemInstruction":{"parts":[{"text":"sys"}]},"contents":[{"role":"user","parts":[{"text":"task A"}]}]}`
	turn2 := `{"systemInstruction":{"parts":[{"text":"sys"}]},"contents":[{"role":"user","parts":[{"text":"task A"}]},{"role":"model","parts":[{"text":"ok"}]},{"role":"user","parts":[{"text":"more"}]}]}`
	other := `{"systemInstruction":{"parts":[{"text":"sys"}]},"contents":[{"role":"user","parts":[{"text":"task B"}]}]}`
	a, b, c := Identify(protocol.Gemini, none, Members([]byte(turn1))), Identify(protocol.Gemini, none, Members([]byte(turn2))), Identify(protocol.Gemini, none, Members([]byte(other)))
	if a.Source != SourceFingerprint || a.ID == "" || a != b {
		t.Fatalf("fingerprint changed over turns: %+v %+v", a, b)
	}
	if a == c {
		t.Fatal("two conversations share a fingerprint")
	}
}

func TestTableBounds(t *testing.T) {
	now := time.Unix(1000, 0)
	tb := NewTable(3, time.Hour)
	for i, s := range []string{"a", "b", "c", "d"} {
		tb.Pin("tok", s, Route{Channel: "x"}, now.Add(time.Duration(i)*time.Second))
	}
	if tb.Len() != 3 {
		t.Fatalf("len %d, want 3", tb.Len())
	}
	if _, ok := tb.Get("tok", "a", now); ok {
		t.Fatal("least recently used session not evicted")
	}
	if _, ok := tb.Get("other", "b", now); ok {
		t.Fatal("a session id found another token's pin")
	}
	if _, ok := tb.Get("tok", "b", now.Add(2*time.Hour)); ok {
		t.Fatal("expired session still pinned")
	}
	tb.Pin("tok", "c", Route{Channel: "y"}, now)
	if share, total := tb.Share("y", []string{"x", "y"}); total != 2 || share != 0.5 {
		t.Fatalf("share %v of %d, want 0.5 of 2", share, total)
	}
	tb.Sweep(func(ch string) bool { return ch != "y" })
	if _, ok := tb.Get("tok", "c", now); ok {
		t.Fatal("pin of a removed channel kept")
	}
}

// TestPinAsksToShare: a pin is shared when new, when its route changes and
// again after half the TTL; a pin another instance shared (Put) is not
// shared back.
func TestPinAsksToShare(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	tb := NewTable(10, time.Hour)
	r1, r2 := Route{Channel: "a", Key: "k1", URL: "u"}, Route{Channel: "b", Key: "k2", URL: "u"}
	k, share := tb.Pin("tok", "s", r1, now)
	if !share || k != Key("tok", "s") {
		t.Fatalf("first pin: share %v, key %x", share, k)
	}
	if _, share := tb.Pin("tok", "s", r1, now.Add(time.Minute)); share {
		t.Error("same route again asked to be shared")
	}
	if _, share := tb.Pin("tok", "s", r2, now.Add(2*time.Minute)); !share {
		t.Error("a moved session did not ask to be shared")
	}
	if _, share := tb.Pin("tok", "s", r2, now.Add(33*time.Minute)); !share {
		t.Error("a pin older than half the TTL did not ask to be shared again")
	}

	other := Key("tok", "remote")
	tb.Put(other, r2, now)
	if got, ok := tb.Get("tok", "remote", now.Add(time.Minute)); !ok || got != r2 {
		t.Errorf("Get after Put = %+v, %v", got, ok)
	}
	if _, share := tb.Pin("tok", "remote", r2, now.Add(time.Minute)); share {
		t.Error("serving a shared pin on its route asked to share it back")
	}
	if share, total := tb.Share("b", []string{"a", "b"}); total != 2 || share != 1 {
		t.Errorf("Share(b) = %v of %d, want all of 2", share, total)
	}
}

// withRole finds what gjson's #(role=="…") query finds: the first object
// of that role, past elements whose strings hold brackets, escaped quotes
// and the role's name.
func TestWithRoleFindsWhatAQueryFinds(t *testing.T) {
	arr := `[ "user", {"role":"system","content":"a \"role\":\"user\" ]} here"}, [{"role":"user"}],` +
		` {"content":[{"text":"x\\"}],"role":"user"} , {"role":"user","content":"second"} ]`
	for _, role := range []string{"user", "system", "assistant"} {
		got := withRole(gjson.Parse(arr), role)
		want := gjson.Get(arr, `#(role=="`+role+`")`)
		if got.Raw != want.Raw {
			t.Errorf("withRole(%s) = %q, the query %q", role, got.Raw, want.Raw)
		}
	}
	if got := withRole(gjson.Parse(`{"role":"user"}`), "user"); got.Exists() {
		t.Errorf("an object is not an array of turns: got %q", got.Raw)
	}
}

// TestKeyOfPartsIsTheKeyOfTheirJoin: instances share pins by key
// (storage.shared), so a key made from parts must be the one an instance
// that joined them itself would make, and parts must not run together.
func TestKeyOfPartsIsTheKeyOfTheirJoin(t *testing.T) {
	if Key("tok", "s", "m") != Key("tok", "s\x00m") {
		t.Fatal("Key of parts differs from the key of their NUL-joined string")
	}
	if Key("tok", "s", "m") == Key("tok", "sm") || Key("tok", "s", "m") == Key("to", "ks", "m") {
		t.Fatal("parts ran together")
	}
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	tb := NewTable(10, time.Hour)
	tb.PinKey(Key("tok", "s", "m"), Route{Channel: "a"}, now)
	if got, ok := tb.Get("tok", "s\x00m", now); !ok || got.Channel != "a" {
		t.Fatalf("Get after PinKey: %v %v", got, ok)
	}
}
