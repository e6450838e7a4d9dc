package convert

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestClientToolsOf(t *testing.T) {
	req := []byte(`{"tools":[{"type":"function","name":"plain"},{"type":"custom","name":"apply_patch"}],
	"input":[{"type":"additional_tools","tools":[{"type":"namespace","name":"functions","tools":[{"type":"custom","name":"exec"},{"type":"function","name":"wait"}]}]}]}`)
	got := clientToolsOf("responses", req)
	want := clientTools{
		"apply_patch":     {name: "apply_patch", custom: true},
		"functions__exec": {namespace: "functions", name: "exec", custom: true},
		"functions__wait": {namespace: "functions", name: "wait"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: got %+v, want %+v", k, got[k], v)
		}
	}
	if clientToolsOf("anthropic", req) != nil || clientToolsOf("responses", []byte(`{"tools":[{"type":"function","name":"x"}]}`)) != nil {
		t.Error("want nil for other families and for plain tools")
	}
}

// TestCustomArgsSplits feeds the arguments of a custom tool call cut at
// every pair of places: the deltas, read as JSON strings, must join to the
// whole input, and none may hold half an escape or half a surrogate pair.
func TestCustomArgsSplits(t *testing.T) {
	for _, args := range []string{
		`{"input":"console.log(\"hé \ud83d\ude00\")\n\\"}`,
		` { "input" : "a\u00e9b" , "x": 1}`,
		`{"input":""}`,
	} {
		var want struct{ Input string }
		if err := json.Unmarshal([]byte(args), &want); err != nil {
			t.Fatal(err)
		}
		for i := 0; i <= len(args); i++ {
			for j := i; j <= len(args); j++ {
				var c customArgs
				c.reset()
				var b strings.Builder
				for _, frag := range []string{args[:i], args[i:j], args[j:]} {
					d := c.add(frag)
					if d == "" {
						continue
					}
					var s string
					if err := json.Unmarshal([]byte(`"`+d+`"`), &s); err != nil || strings.ContainsRune(s, '\uFFFD') {
						t.Fatalf("%s cut at %d,%d: delta %q is not a whole JSON string (%v)", args, i, j, d, err)
					}
					b.WriteString(s)
				}
				if !c.streaming() || b.String() != want.Input || customInput(args) != want.Input {
					t.Fatalf("%s cut at %d,%d: streamed %q (streaming %v), want %q", args, i, j, b.String(), c.streaming(), want.Input)
				}
			}
		}
	}
	var c customArgs
	c.reset()
	if c.add(`{"patch":"x"}`) != "" || c.streaming() {
		t.Error("arguments without input first must not stream")
	}
}
