package jsonwalk

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tidwall/gjson"
)

// The walks must read what gjson reads, which they replace on the request
// path.
func TestMemberAgreesWithGJSON(t *testing.T) {
	docs := []string{
		`{"a":1,"b":"x","c":{"d":[1,{"e":"}"}],"f":null},"g":true}`,
		` { "a" : -12 , "s" : "q\"uo}te" , "arr" : [ "]" , { } ] , "n" : null , "z" : 0 } `,
		`{"usage":{"input_tokens":21,"cache_creation":{"ephemeral_1h_input_tokens":3},"output_tokens":9}}`,
		`{"x":1.5e3,"y":12.0,"w":"7"}`,
		`{}`,
		`[1,2]`,
		`{"a":1`,
		``,
	}
	keys := []string{"a", "b", "c", "g", "s", "arr", "n", "z", "usage", "x", "y", "w", "missing"}
	for _, d := range docs {
		for _, k := range keys {
			want := gjson.Get(d, k)
			got := Member(d, k)
			if want.Exists() && gjson.Valid(d) && got != want.Raw {
				t.Errorf("Member(%q, %q) = %q, gjson %q", d, k, got, want.Raw)
			}
			if !want.Exists() && got != "" {
				t.Errorf("Member(%q, %q) = %q, gjson finds nothing", d, k, got)
			}
			if want.Type == gjson.Number {
				if n, ok := Int(got); !ok || n != want.Int() {
					t.Errorf("Int(Member(%q, %q)) = %d %v, gjson %d", d, k, n, ok, want.Int())
				}
			} else if _, ok := Int(got); ok {
				t.Errorf("Int(%q) ok for a %s", got, want.Type)
			}
		}
	}
}

func TestIntOfReadsAsGJSON(t *testing.T) {
	doc := `{"n":12,"q":"34","f":"x","z":null,"o":{"a":1}}`
	for _, k := range []string{"n", "q", "f", "z", "o", "missing"} {
		if got, want := IntOf(doc, k), gjson.Get(doc, k).Int(); got != want {
			t.Errorf("IntOf(%q) = %d, gjson %d", k, got, want)
		}
	}
}

func TestFirstTextSet(t *testing.T) {
	for _, c := range []struct{ arr, want string }{
		{`[{"a":1},2]`, `{"a":1}`},
		{` [ "x" ]`, `"x"`},
		{`[]`, ``},
		{`{"a":1}`, ``},
		{``, ``},
	} {
		if got := First(c.arr); got != c.want {
			t.Errorf("First(%q) = %q, want %q", c.arr, got, c.want)
		}
	}
	for raw, want := range map[string]bool{`"a"`: true, `""`: false, `null`: false, `1`: false, ``: false} {
		if Text(raw) != want {
			t.Errorf("Text(%q) = %v", raw, !want)
		}
	}
	for raw, want := range map[string]bool{`"a"`: true, `""`: false, `null`: false, `0`: true, `[]`: true, ``: false} {
		if Set(raw) != want {
			t.Errorf("Set(%q) = %v", raw, !want)
		}
	}
}

func TestMembersStopsWhenAsked(t *testing.T) {
	var seen []string
	Members(`{"a":1,"b":2,"c":3}`, func(k, _ string) bool {
		seen = append(seen, k)
		return k != "b"
	})
	if len(seen) != 2 || seen[1] != "b" {
		t.Errorf("visited %v, want a then b", seen)
	}
}

// Strings ending in escaped backslashes, and quotes escaped after them, are
// where a walk that looks for the closing quote first can go wrong.
func TestMemberAgreesWithGJSONOnEscapes(t *testing.T) {
	docs := []string{
		`{"a":"x\\","b":1}`,
		`{"a":"x\\\"}","b":2}`,
		`{"a":"\\\\\\\\","b":"\"\"","c":[ "\\", "\"]" ],"d":3}`,
		`{"a\"b":1,"b":"\u0022","c":{"k\\":"v\\\\\""},"d":"end\\"}`,
		`{"a":"no end\"}`,
		`{"a":"\`,
	}
	for _, d := range docs {
		for _, k := range []string{"a", "b", "c", "d"} {
			want := gjson.Get(d, k)
			got := Member(d, k)
			if gjson.Valid(d) && want.Exists() && got != want.Raw {
				t.Errorf("Member(%q, %q) = %q, gjson %q", d, k, got, want.Raw)
			}
			if !gjson.Valid(d) && got != "" && k != "a" {
				t.Errorf("Member(%q, %q) = %q past a string that never ends", d, k, got)
			}
		}
	}
}

// BenchmarkMembers walks the top level of requests the real CLIs sent
// (protocol/convert/testdata/real), as the engine does once per request.
func BenchmarkMembers(b *testing.B) {
	for _, name := range []string{"claude-code-tool-1", "codex-tool-1", "gemini-cli-tool-2"} {
		body, err := os.ReadFile(filepath.Join("..", "convert", "testdata", "real", name+".json"))
		if err != nil {
			b.Fatal(err)
		}
		doc := compact(b, body)
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				n := 0
				Members(doc, func(_, _ string) bool { n++; return true })
				if n < 3 {
					b.Fatalf("%d members", n)
				}
			}
		})
	}
}

// Elements must hand over what gjson's Array holds, element for element.
func TestElementsAgreesWithGJSON(t *testing.T) {
	docs := []string{
		`[]`,
		` [ 1 , "a" , {"b":"]"} , [2,[3]] , null , true , -1.5e3 , "\\" , "\"]" ] `,
		`[{"role":"user","content":[{"type":"text","text":"x\\\"y"}]},{"role":"assistant"}]`,
		`["\u0022",{}]`,
	}
	for _, d := range docs {
		want := gjson.Parse(d).Array()
		var got []string
		Elements(d, func(v string) bool { got = append(got, v); return true })
		if len(got) != len(want) {
			t.Fatalf("Elements(%q): %d elements, gjson %d", d, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i].Raw {
				t.Errorf("Elements(%q)[%d] = %q, gjson %q", d, i, got[i], want[i].Raw)
			}
		}
	}
	for _, d := range []string{`{"a":[1]}`, `"[1]"`, ``, `[1,`, `["never ends]`} {
		n := 0
		Elements(d, func(string) bool { n++; return true })
		if d[0:min(1, len(d))] != "[" && n != 0 {
			t.Errorf("Elements(%q) visited %d elements of something that is not an array", d, n)
		}
		if d == `["never ends]` && n != 0 {
			t.Errorf("Elements(%q) handed over a string that never ends", d)
		}
	}
	n := 0
	Elements(`[1,2,3]`, func(string) bool { n++; return n < 2 })
	if n != 2 {
		t.Errorf("Elements went on after fn returned false: %d calls", n)
	}
}
