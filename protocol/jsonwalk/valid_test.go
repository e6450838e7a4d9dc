package jsonwalk

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// validCases are read by the test and seed the fuzz target; the answer is
// encoding/json.Valid's.
var validCases = []string{
	``, ` `, `{}`, `[]`, ` {} `, `{`, `}`, `[`, `]`, `[}`, `{]`, `{}}`, `[]]`, `{} {}`, `[],`,
	`0`, `-0`, `01`, `-`, `1.`, `1.5`, `.5`, `1e`, `1e+`, `1e5`, `1E-5`, `-1.5e+10`, `1.5e`, `+1`, `0x10`, `1a`,
	`true`, `false`, `null`, `tru`, `nul`, `True`, `truex`, `true false`,
	`""`, `"a"`, `"a`, `"\"`, `"\\"`, `"\\\""`, `"\/\b\f\n\r\t"`, `"\x"`, `"\u00e9"`, `"\u00G9"`, `"\u12"`,
	"\"tab\there\"", "\"nl\nhere\"", "\"\x7f\"", "\"caf\xc3\xa9\"", `"long string with no escapes in it at all, past eight bytes"`,
	`"0123456\"89abcdef"`, `"01234567\\"`, `"0123456789abcde\u0041"`,
	`{"a":1}`, `{"a":1,}`, `{"a" 1}`, `{"a":}`, `{1:2}`, `{"a":1 "b":2}`, `{"a":{"b":[1,2,{"c":null}]}}`,
	`[1,2,3]`, `[1,,2]`, `[,1]`, `[1 2]`, `[[[]]]`, `[[[]]`, `[{"a":[{}]}]`, `{"a":[}`,
	` { "k" : [ true , false , null ] , "n" : -0.5e-3 } `,
	"\t\r\n[\t1\r,\n2 ]\n",
}

func TestValidAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range validCases {
		if got, want := Valid(c), json.Valid([]byte(c)); got != want {
			t.Errorf("Valid(%q) = %v, encoding/json %v", c, got, want)
		}
	}
	// Deep nesting goes past the fixed stack without recursion.
	deep := strings.Repeat("[", 10000) + strings.Repeat("]", 10000)
	if !Valid(deep) || Valid(deep[:len(deep)-1]) {
		t.Error("Valid is wrong about 10,000 nested arrays")
	}
}

func TestValidAcceptsTheRealRequests(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("..", "convert", "testdata", "real", "*.json"))
	if len(paths) == 0 {
		t.Fatal("no recorded requests found")
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !Valid(string(b)) {
			t.Errorf("%s: not valid", p)
		}
		// Cut anywhere inside, a document is no longer valid.
		for _, n := range []int{1, len(b) / 3, len(b) / 2, len(b) - 2} {
			if Valid(string(b[:n])) {
				t.Errorf("%s cut at %d: valid", p, n)
			}
		}
	}
}

// ValidMembers finds the members Members finds, in a valid object; the
// recordings and the member tests' documents are the cases.
func TestValidMembersFindsWhatMembersFinds(t *testing.T) {
	docs := []string{
		`{"a":1,"b":"x","c":{"d":[1,{"e":"}"}],"f":null},"g":true}`,
		` { "a" : -12 , "s" : "q\"uo}te" , "arr" : [ "]" , { } ] , "n" : null , "z" : 0 } `,
		`{"mod\u0065l":"m","x":[[],{}],"y":{"z":{"w":[1,2,[3]]}},"last":"v"}`,
		`{}`, `[{"a":1}]`, `"s"`,
	}
	paths, _ := filepath.Glob(filepath.Join("..", "convert", "testdata", "real", "*.json"))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(b))
	}
	for _, d := range docs {
		var want, got []string
		Members(d, func(k, v string) bool { want = append(want, k+"="+v); return true })
		if !ValidMembers(d, func(k, v string) { got = append(got, k+"="+v) }) {
			t.Errorf("%.60q: not valid", d)
			continue
		}
		if !slices.Equal(got, want) {
			t.Errorf("%.60q: members %.200q, Members finds %.200q", d, got, want)
		}
	}
	for _, bad := range []string{`{"a":1,}`, `{"a":1 "b":2}`, `{"a":[}`, `{"a":1}x`} {
		if ValidMembers(bad, func(string, string) {}) {
			t.Errorf("%q: valid", bad)
		}
	}
}

func FuzzValid(f *testing.F) {
	for _, c := range validCases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Valid(s), json.Valid([]byte(s)); got != want {
			t.Errorf("Valid(%q) = %v, encoding/json %v", s, got, want)
		}
		var n int
		if ValidMembers(s, func(string, string) { n++ }) != json.Valid([]byte(s)) {
			t.Errorf("ValidMembers(%q) disagrees with Valid", s)
		}
	})
}

// BenchmarkValid checks the requests the real CLIs sent, against
// gjson.ValidBytes, which it replaced on the request path.
func BenchmarkValid(b *testing.B) {
	body, err := os.ReadFile(filepath.Join("..", "convert", "testdata", "real", "claude-code-tool-1.json"))
	if err != nil {
		b.Fatal(err)
	}
	doc := compact(b, body)
	b.Run("jsonwalk", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		b.ReportAllocs()
		for b.Loop() {
			if !Valid(doc) {
				b.Fatal("not valid")
			}
		}
	})
	b.Run("members", func(b *testing.B) { // what admission runs: one pass for both
		b.SetBytes(int64(len(doc)))
		b.ReportAllocs()
		for b.Loop() {
			n := 0
			if !ValidMembers(doc, func(string, string) { n++ }) || n < 3 {
				b.Fatal("not valid")
			}
		}
	})
	b.Run("gjson", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			if !gjson.Valid(doc) {
				b.Fatal("not valid")
			}
		}
	})
}

// compact is a recorded request as the CLI sent it: the files are indented
// for review, the wire has no spaces.
func compact(b *testing.B, body []byte) string {
	var out bytes.Buffer
	if err := json.Compact(&out, body); err != nil {
		b.Fatal(err)
	}
	return out.String()
}
