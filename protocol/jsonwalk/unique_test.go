package jsonwalk

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestValidUniqueFindsDuplicateKeys(t *testing.T) {
	var big strings.Builder
	big.WriteString(`{"a":{`)
	for i := range 200 {
		fmt.Fprintf(&big, `"k%d":%d,`, i, i)
	}
	big.WriteString(`"k150":0},"b":1}`)
	for _, tc := range []struct{ doc, dup string }{
		{`{"model":"a","model":"b"}`, "model"},
		{`{"model":"a","mod\u0065l":"b"}`, "model"},
		{`{"stream":false,"x":[1,2],"stream":true}`, "stream"},
		{`{"messages":[{"role":"user","role":"system"}]}`, "role"},
		{`{"a":{"b":{"c":1,"c":2}}}`, "c"},
		{`{"a":{"x":1},"b":{"x":1}}`, ""},               // the same key in sibling objects
		{`{"a":{"x":1},"x":2}`, ""},                     // in an inner and the outer object
		{`[{"x":1},{"x":2}]`, ""},                       // in the elements of an array
		{`{"a":{},"b":[],"c":{"d":[{}]}}`, ""},          // empty objects
		{`{"a":[{"x":1,"y":{"x":2}}],"x":3,"y":4}`, ""}, // nesting closes cleanly
		{big.String(), "k150"},
	} {
		ok, dup := ValidUnique(tc.doc, nil)
		if !ok || dup != tc.dup {
			t.Errorf("%.60s: got %v %q, want valid with duplicate %q", tc.doc, ok, dup, tc.dup)
		}
	}
}

// A body of one object with very many keys costs a map lookup per key,
// not a scan of all the keys before it.
func TestValidUniqueIsLinear(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := range 200000 {
		fmt.Fprintf(&b, `"k%d":0,`, i)
	}
	b.WriteString(`"end":0}`)
	start := time.Now()
	if ok, dup := ValidUnique(b.String(), nil); !ok || dup != "" {
		t.Fatal(ok, dup)
	}
	// A scan per key would take about 2e10 comparisons here (tens of
	// seconds); a map lookup per key takes well under a second even on a
	// busy machine.
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("200,000 keys took %s", d)
	}
}

// BenchmarkValidUnique is BenchmarkValid's "members" with the duplicate
// check admission now runs.
func BenchmarkValidUnique(b *testing.B) {
	body, err := os.ReadFile(filepath.Join("..", "convert", "testdata", "real", "claude-code-tool-1.json"))
	if err != nil {
		b.Fatal(err)
	}
	doc := compact(b, body)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if ok, dup := ValidUnique(doc, func(string, string) {}); !ok || dup != "" {
			b.Fatal(ok, dup)
		}
	}
}
