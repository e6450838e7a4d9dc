package gjwalk

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// ForEach, Elements and Pick stand in for gjson's ForEach, Array and Get
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
		ForEach(root, func(_, v gjson.Result) bool { checkWalk(t, v); return true })
	})
}

func checkWalk(t *testing.T, v gjson.Result) {
	t.Helper()
	var want, got []string
	v.ForEach(func(k, x gjson.Result) bool { want = append(want, k.Str+"="+describe(x)); return true })
	ForEach(v, func(k, x gjson.Result) bool { got = append(got, k.Str+"="+describe(x)); return true })
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("ForEach(%s):\n%s\ngjson ForEach:\n%s", v.Raw, got, want)
	}
	want, got = want[:0], got[:0]
	for _, x := range v.Array() {
		want = append(want, describe(x))
	}
	for _, x := range Elements(v) {
		got = append(got, describe(x))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("Elements(%s):\n%s\ngjson Array:\n%s", v.Raw, got, want)
	}
	names := []string{"a", "b", "name", "messages", "", `k"q`}
	m := make([]gjson.Result, len(names))
	Pick(v, names, m)
	for i, n := range names {
		if !v.IsObject() {
			break
		}
		if g, w := describe(m[i]), describe(v.Get(gjsonPathEscape(n))); g != w {
			t.Fatalf("Pick(%s, %q) = %s, Get %s", v.Raw, n, g, w)
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
