package engine

import (
	"testing"

	"github.com/tidwall/gjson"
)

// readMembers must find what gjson.GetBytes finds for every member it
// reads, in one walk: the first of duplicate keys, escaped key names,
// members after long nested values, and nothing in a non-object.
func TestReadMembersMatchesGet(t *testing.T) {
	bodies := []string{
		`{"model":"m1","stream":true,"messages":[{"role":"user","content":"hi"}]}`,
		`{"messages":[{"role":"user","content":"{\"model\":\"inner\"}"}],"stream_options":{"include_usage":true},"model":"late"}`,
		`{"model":"first","model":"second","stream":false,"stream":true}`,
		`{"mod\u0065l":"escaped","system":[{"type":"text","text":"s"}],"metadata":{"user_id":"u"}}`,
		`{"input":"hi","instructions":"be brief","prompt_cache_key":"k","user":"u9"}`,
		`{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"systemInstruction":{"parts":[]},"system_instruction":1}`,
		`[{"model":"m"}]`,
		`"model"`,
		``,
	}
	for _, b := range bodies {
		m := readMembers([]byte(b))
		if want := gjson.Parse(b).IsObject(); m.object != want {
			t.Errorf("%s: object = %v, want %v", b, m.object, want)
		}
		for _, name := range memberNames {
			got, want := m.get(name), gjson.GetBytes([]byte(b), name)
			if got.Raw != want.Raw || got.Type != want.Type || got.Str != want.Str {
				t.Errorf("%s: member %s = %q, gjson.GetBytes finds %q", b, name, got.Raw, want.Raw)
			}
		}
	}
}
