package count

import (
	"unicode"
	"unicode/utf8"
)

// The o200k_base encoding first cuts text into pieces with one regular
// expression and then runs byte-pair merges inside each piece. The library's
// regexp2 engine costs about one allocation and ~0.5 µs per piece, which is
// most of the time spent on a large request; splitter produces the same
// pieces by hand. The pattern, alternative by alternative (P is
// [^\r\n\p{L}\p{N}], U is [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}], W is
// [\p{Ll}\p{Lm}\p{Lo}\p{M}], C the optional contraction
// (?i:'s|'t|'re|'ve|'m|'ll|'d)):
//
//	A1  P? U* W+ C?
//	A2  P? U+ W* C?
//	A3  \p{N}{1,3}
//	A4  ' '? [^\s\p{L}\p{N}]+ [\r\n/]*
//	A5  \s* [\r\n]+
//	A6  \s+ (?!\S)
//	A7  \s+
//
// The first alternative that matches at the current position wins, with the
// backtracking order of a regex engine; TestSplitMatchesLibrary and
// FuzzSplitMatchesLibrary check the result against the library's own count.

// Character classes of a rune, as bits.
const (
	clsL  = 1 << iota // \p{L}
	clsN              // \p{N}
	clsS              // \s (unicode.IsSpace, as regexp2 defines it)
	clsU              // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
	clsW              // [\p{Ll}\p{Lm}\p{Lo}\p{M}]
	clsNL             // \r or \n
)

var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = clsL | clsU
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = clsL | clsW
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = clsN
	}
	for _, c := range "\t\v\f " {
		t[c] = clsS
	}
	t['\r'] = clsS | clsNL
	t['\n'] = clsS | clsNL
	return t
}()

func classOf(r rune) uint8 {
	if r < utf8.RuneSelf {
		return asciiClass[r]
	}
	switch {
	case unicode.IsLetter(r):
		switch {
		case unicode.IsUpper(r) || unicode.IsTitle(r):
			return clsL | clsU
		case unicode.IsLower(r):
			return clsL | clsW
		}
		return clsL | clsU | clsW // Lm, Lo
	case unicode.Is(unicode.M, r):
		return clsU | clsW
	case unicode.IsNumber(r):
		return clsN
	case unicode.IsSpace(r):
		return clsS
	}
	return 0
}

// splitter yields the o200k_base pieces of s, which must be valid UTF-8.
type splitter struct {
	s   string
	pos int
}

// at decodes the rune at i: its class and size.
func (sp *splitter) at(i int) (uint8, int) {
	if c := sp.s[i]; c < utf8.RuneSelf {
		return asciiClass[c], 1
	}
	r, n := utf8.DecodeRuneInString(sp.s[i:])
	return classOf(r), n
}

// next returns the next piece, or false at the end.
func (sp *splitter) next() (string, bool) {
	i := sp.pos
	if i >= len(sp.s) {
		return "", false
	}
	end := sp.match(i)
	if end <= i { // cannot happen (every rune matches some alternative); never loop
		_, n := sp.at(i)
		end = i + n
	}
	sp.pos = end
	return sp.s[i:end], true
}

func (sp *splitter) match(i int) int {
	c0, n0 := sp.at(i)
	prefix := c0&(clsNL|clsL|clsN) == 0
	if prefix && i+n0 < len(sp.s) {
		if e := sp.a1(i + n0); e > 0 {
			return e
		}
	}
	if e := sp.a1(i); e > 0 {
		return e
	}
	if prefix && i+n0 < len(sp.s) {
		if e := sp.a2(i + n0); e > 0 {
			return e
		}
	}
	if e := sp.a2(i); e > 0 {
		return e
	}
	if c0&clsN != 0 {
		e := i + n0
		for k := 1; k < 3 && e < len(sp.s); k++ {
			c, n := sp.at(e)
			if c&clsN == 0 {
				break
			}
			e += n
		}
		return e
	}
	if e := sp.a4(i, c0); e > 0 {
		return e
	}
	return sp.space(i)
}

// a1 matches U* W+ C? at i; it returns the end, or -1.
func (sp *splitter) a1(i int) int {
	p, lastW, lastWEnd := i, -1, -1
	for p < len(sp.s) {
		c, n := sp.at(p)
		if c&clsU == 0 {
			break
		}
		if c&clsW != 0 {
			lastW, lastWEnd = p, p+n
		}
		p += n
	}
	if p < len(sp.s) {
		if c, _ := sp.at(p); c&clsW != 0 {
			return sp.contraction(sp.runW(p))
		}
	}
	if lastW < 0 {
		return -1
	}
	// U* gives back runes until W+ can start; the rune after the last W of
	// the U run is not W, so W+ ends right after it.
	return sp.contraction(lastWEnd)
}

// a2 matches U+ W* C? at i; it returns the end, or -1.
func (sp *splitter) a2(i int) int {
	p := i
	for p < len(sp.s) {
		c, n := sp.at(p)
		if c&clsU == 0 {
			break
		}
		p += n
	}
	if p == i {
		return -1
	}
	return sp.contraction(sp.runW(p))
}

func (sp *splitter) runW(p int) int {
	for p < len(sp.s) {
		c, n := sp.at(p)
		if c&clsW == 0 {
			break
		}
		p += n
	}
	return p
}

// contraction extends end over 's 't 're 've 'm 'll 'd, ASCII case-blind.
func (sp *splitter) contraction(end int) int {
	s := sp.s
	if end+1 >= len(s) || s[end] != '\'' {
		return end
	}
	switch s[end+1] | 0x20 {
	case 's', 't', 'm', 'd':
		return end + 2
	case 'r', 'v':
		if end+2 < len(s) && s[end+2]|0x20 == 'e' {
			return end + 3
		}
	case 'l':
		if end+2 < len(s) && s[end+2]|0x20 == 'l' {
			return end + 3
		}
	}
	return end
}

// a4 matches ' '? [^\s\p{L}\p{N}]+ [\r\n/]* at i; it returns the end, or -1.
func (sp *splitter) a4(i int, c0 uint8) int {
	const notQ = clsS | clsL | clsN
	j := i
	if sp.s[i] == ' ' && i+1 < len(sp.s) {
		if c, _ := sp.at(i + 1); c&notQ == 0 {
			j = i + 1
		}
	}
	if j == i && c0&notQ != 0 {
		return -1
	}
	for j < len(sp.s) {
		c, n := sp.at(j)
		if c&notQ != 0 {
			break
		}
		j += n
	}
	for j < len(sp.s) && (sp.s[j] == '\r' || sp.s[j] == '\n' || sp.s[j] == '/') {
		j++
	}
	return j
}

// space matches A5, A6 or A7 at i, which holds a \s rune.
func (sp *splitter) space(i int) int {
	e, lastStart, lastNL, runes := i, i, -1, 0
	for e < len(sp.s) {
		c, n := sp.at(e)
		if c&clsS == 0 {
			break
		}
		if c&clsNL != 0 {
			lastNL = e
		}
		lastStart = e
		e += n
		runes++
	}
	switch {
	case lastNL >= 0: // A5: \s* backtracks to the last newline
		return lastNL + 1
	case e == len(sp.s) || runes == 1: // A6 at the end of text, else A7
		return e
	}
	return lastStart // A6: leave the last space to the next piece
}
