package convert

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// forEach, elements and pick stand in for gjson's ForEach, Array and Get
// in the decoders: on any valid JSON they must hand over the same keys and
// the same Results, at the top level and one level down.
func FuzzWalkAgreesWithGJSON(f *testing.F) {
	for _, s := range []string{
		`{"a":1,"b":"x","c":{"d":[1,{"e":"}"}],"f":null},"g":true,"a":2}`,
		`[1,"a\\nb",{"b":"]"},[2,[3]],null,true,-1.5e3,"\\"","\u00e9"]`,
		`{"n\u0061me":"esc","k\"q":[],"":{}}`,
		`"just a string"`, `12`, `null`, `[]`, `{}`,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"hi\tthere"}]}]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		if !gjson.Valid(doc) {
			return
		}
		root := gjson.Parse(doc)
		checkWalk(t, root)
		forEach(root, func(_, v gjson.Result) bool { checkWalk(t, v); return true })
	})
}

func checkWalk(t *testing.T, v gjson.Result) {
	t.Helper()
	var want, got []string
	v.ForEach(func(k, x gjson.Result) bool { want = append(want, k.Str+"="+describe(x)); return true })
	forEach(v, func(k, x gjson.Result) bool { got = append(got, k.Str+"="+describe(x)); return true })
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("forEach(%s):\n%s\ngjson ForEach:\n%s", v.Raw, got, want)
	}
	want, got = want[:0], got[:0]
	for _, x := range v.Array() {
		want = append(want, describe(x))
	}
	for _, x := range elements(v) {
		got = append(got, describe(x))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("elements(%s):\n%s\ngjson Array:\n%s", v.Raw, got, want)
	}
	names := []string{"a", "b", "name", "messages", "", `k"q`}
	m := make([]gjson.Result, len(names))
	pick(v, names, m)
	for i, n := range names {
		if !v.IsObject() {
			break
		}
		if g, w := describe(m[i]), describe(v.Get(gjsonPathEscape(n))); g != w {
			t.Fatalf("pick(%s, %q) = %s, Get %s", v.Raw, n, g, w)
		}
	}
}

// describe is what a decoder may read of a Result.
func describe(x gjson.Result) string {
	return fmt.Sprintf("%v|%q|%q|%v|%v", x.Type, x.Raw, x.Str, x.Num, x.Exists())
}

// gjsonPathEscape makes a member name a literal gjson path.
func gjsonPathEscape(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune(`.*?|#@\!=<>%"`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

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
		if err := rqDecodeGemini(&r, []byte(body), "anthropic"); err != nil {
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
