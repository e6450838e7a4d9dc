package count

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// splitCases exercise every alternative of the o200k_base pattern and its
// backtracking: prefixes, contractions, digit runs, punctuation with trailing
// newlines and slashes, whitespace before words, newlines and text ends, and
// non-ASCII letters, marks, numbers and spaces.
var splitCases = []string{
	"",
	"The quick brown fox jumps over the lazy dog.",
	"Hello, Claude",
	"don't you'LL WE'RE it's I'M they'VE he'd 'sup",
	"HTTPServer getHTTPResponseCode XMLHttpRequest iOS macOS",
	"1234567 12.5 3,000,000 v1.2.3 0x1F",
	"func main() {\n\tfmt.Println(\"hi\")\n}\n",
	"a  b   c    d\n\n\n  e\r\n\tf  \n",
	"   leading and trailing   ",
	"// comment\n//\n/* block */ path/to/file.go ../x",
	"!!! ??? ... --- ===> <=> ~~~\n\n",
	"naïve café résumé Ñandú ǅungla ǈ",
	"e\u0301cole a\u0308 \u0301\u0301x",
	"日本語のテキスト、中文文本。한국어 텍스트",
	"Привет, мир! ΑΒΓ αβγ",
	"٣٤٥ ⅣⅤ ½¾ ²³",
	"\u00a0nbsp\u3000ideo\u2028ls\u2029ps\u0085nel",
	"emoji 🦊🚀 👍🏽 ❤️",
	"tab\tsep\tvalues\t\t\n",
	"   \n",
	" \n ",
	"x \u3000y",
	"'s's 'S'T'RE'VE'M'LL'D",
	"ǅa Ǆb ǆc",
	"ʰʷ ʰa aʰ Aʰ ʰA",
	"ꙮꙮ 𝒜𝒷𝒸 𝟙𝟚𝟛",
	"\x00\x01\x1b ctl",
}

// libComparable reports whether the library's count is a valid reference for
// s. The library's generated regex matches no alternative at U+007F (DEL) and
// skips it, so it never counts DEL and splits the text around it, where the
// o200k_base pattern would keep DEL in a punctuation piece; our splitter
// follows the pattern. DEL does not occur in real prompts.
func libComparable(s string) bool { return !strings.ContainsRune(s, 0x7f) }

func libCount(t testing.TB, s string) int {
	t.Helper()
	b := encoder()
	n, err := b.codec.Count(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestSplitMatchesLibrary(t *testing.T) {
	b := encoder()
	for _, s := range splitCases {
		if got, want := b.count(s), libCount(t, s); got != want {
			t.Errorf("count(%q) = %d, library says %d (pieces %q)", s, got, want, pieces(s))
		}
	}
}

func pieces(s string) []string {
	var out []string
	sp := splitter{s: s}
	for {
		p, ok := sp.next()
		if !ok {
			return out
		}
		out = append(out, p)
	}
}

func TestSplitCoversInput(t *testing.T) {
	for _, s := range splitCases {
		if !utf8.ValidString(s) {
			continue
		}
		if got := strings.Join(pieces(s), ""); got != s {
			t.Errorf("pieces of %q join to %q", s, got)
		}
	}
}

func FuzzSplitMatchesLibrary(f *testing.F) {
	for _, s := range splitCases {
		f.Add(s)
	}
	f.Add("\xff\xfe invalid \xc3 utf8")
	f.Fuzz(func(t *testing.T, s string) {
		if !libComparable(s) {
			t.Skip("DEL: see libComparable")
		}
		b := encoder()
		if got, want := b.count(s), libCount(t, s); got != want {
			t.Fatalf("count(%q) = %d, library says %d (pieces %q)", s, got, want, pieces(s))
		}
	})
}

// TestSplitEveryRune compares against the library with every code point up to
// U+2FFFF in several contexts (after a letter, before a lowercase and an
// uppercase letter, doubled, after a space and a digit, before a newline), so
// a rune classified differently from regexp2's Unicode tables fails here.
func TestSplitEveryRune(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("slow: ~6 s plain, a minute under -race")
	}
	b := encoder()
	var sb strings.Builder
	flush := func(first rune) {
		s := sb.String()
		sb.Reset()
		if got, want := b.count(s), libCount(t, s); got != want {
			t.Errorf("block from %U: count = %d, library says %d", first, got, want)
		}
	}
	first := rune(0)
	for r := rune(0); r <= 0x2FFFF; r++ {
		if !utf8.ValidRune(r) || r == 0x7f {
			continue
		}
		c := string(r)
		sb.WriteString("x" + c + "y A" + c + "B " + c + c + "'s 1" + c + "2 " + c + "\n")
		if r%64 == 63 {
			flush(first)
			first = r + 1
		}
	}
	flush(first)
}
