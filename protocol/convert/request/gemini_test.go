package request

import "testing"

// A Gemini functionResponse's response becomes the tool result's text: its
// output or error when that is its only name (error marks it failed), else
// its JSON. The decoder reads that in one walk of the response.
func TestGeminiFunctionResponseShapes(t *testing.T) {
	for _, c := range []struct {
		resp, text string
		isErr      bool
	}{
		{`{"output":"a"}`, "a", false},
		{`{"error":"e"}`, "e", true},
		{`{"output":{"k":1}}`, `{"k":1}`, false},
		{`{"output":"a","error":"e"}`, `{"output":"a","error":"e"}`, false},
		{`{"output":"a","output":"b"}`, "a", false},
		{`{"result":1}`, `{"result":1}`, false},
		{`"str"`, `"str"`, false},
	} {
		body := `{"contents":[{"role":"model","parts":[{"functionCall":{"name":"f","args":{}}}]},` +
			`{"role":"user","parts":[{"functionResponse":{"name":"f","response":` + c.resp + `}}]}]}`
		var r Req
		if err := decodeGemini(&r, []byte(body), "anthropic"); err != nil {
			t.Fatalf("%s: %v", c.resp, err)
		}
		last := r.Msgs[len(r.Msgs)-1].Parts
		if len(last) != 1 || last[0].Kind != PartToolResult || len(last[0].Content) != 1 {
			t.Fatalf("%s: decoded %+v", c.resp, last)
		}
		if got := last[0].Content[0].Text; got != c.text || last[0].IsError != c.isErr {
			t.Errorf("%s: text %q error %v, want %q %v", c.resp, got, last[0].IsError, c.text, c.isErr)
		}
	}
}
