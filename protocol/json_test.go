package protocol

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func jsonValid(b []byte) bool { return json.Valid(b) }

// FuzzAppendJSONString: the output is valid JSON that decodes back to the
// input (invalid UTF-8 becomes U+FFFD, as encoding/json does).
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", "quote \" and \\", "ctl \x00\x01\n\r\t", "é中😀", "bad \xff utf8", "\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := AppendJSONString(nil, s)
		var back string
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("%q -> %s: %v", s, out, err)
		}
		if utf8.ValidString(s) && back != s {
			t.Fatalf("%q -> %s -> %q", s, out, back)
		}
	})
}

// BenchmarkAppendJSONString writes prompt-like text: prose and code with
// a newline or a quote every few dozen bytes, and some non-ASCII.
func BenchmarkAppendJSONString(b *testing.B) {
	s := strings.Repeat("The tool returned: if err != nil { return fmt.Errorf(\"read: %w\", err) } — done.\n", 120)
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	buf := make([]byte, 0, 2*len(s))
	for b.Loop() {
		buf = AppendJSONString(buf[:0], s)
	}
}
