package engine

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/ccload/ccload/engine/failure"
	"github.com/ccload/ccload/protocol"
)

// TestAppendAttemptsJSONMatchesEncodingJSON: the hand-written encoder
// decodes to exactly what json.Marshal of the same attempts decodes to,
// for empty and set optional fields and strings that need escaping.
func TestAppendAttemptsJSONMatchesEncodingJSON(t *testing.T) {
	cases := [][]*attemptLog{
		{{Channel: "a", KeyFP: "sk-…0001", URL: "http://x/", Protocol: protocol.Anthropic, UpstreamModel: "m", Status: 200, DurationMs: 12}},
		{
			{Channel: "bad \"one\"", KeyFP: "k", URL: "https://h/v1?k=<masked>&x=1", Protocol: protocol.OpenAI, Status: 500,
				Kind: failure.Kind("server"), Scope: failure.Scope("channel"), DurationMs: -1, Error: "line1\nline2\t\\ \u2028 é \x01"},
			{Channel: "good", Protocol: protocol.Responses, Status: 200, Notes: []string{"dropped: parallel_tool_calls", "😀"}},
		},
	}
	for i, atts := range cases {
		want, err := json.Marshal(atts)
		if err != nil {
			t.Fatal(err)
		}
		got := appendAttemptsJSON(nil, atts)
		var w, g any
		if err := json.Unmarshal(want, &w); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("case %d: not JSON: %v: %s", i, err, got)
		}
		if !reflect.DeepEqual(w, g) {
			t.Errorf("case %d:\n got %s\nwant %s", i, got, want)
		}
	}
}
