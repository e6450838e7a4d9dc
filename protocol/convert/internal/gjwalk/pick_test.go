package gjwalk

import (
	"testing"

	"github.com/tidwall/gjson"
)

// Pick must find what a Get per member finds: the first of duplicate
// keys, escaped names, nothing for an absent member or a non-object.
func TestPickFindsWhatGetFinds(t *testing.T) {
	names := []string{"a", "b", "missing", "name"}
	for _, doc := range []string{
		`{"a":1,"b":{"x":[1,2]},"a":2,"n\u0061me":"esc"}`,
		`{"b":"late","big":{"a":"inner"},"a":[{"a":0}]}`,
		`{}`, `[{"a":1}]`, `"a"`, `7`,
	} {
		var got [4]gjson.Result
		Pick(gjson.Parse(doc), names, got[:])
		for i, n := range names {
			want := gjson.Parse(doc).Get(n)
			if got[i].Raw != want.Raw || got[i].Exists() != want.Exists() {
				t.Errorf("%s: Pick %s = %q, Get %q", doc, n, got[i].Raw, want.Raw)
			}
		}
	}
}
