// Package termtext makes text from clients and upstreams safe to print on a
// terminal: a model name or an upstream error may hold escape
// sequences (ESC[2J, an OSC title) or CR/LF that forge lines. Every
// human-readable CLI and TUI output passes its cells through Escape; JSON
// output does not need it (encoding/json escapes control characters).
package termtext

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Escape returns s with every control character (C0, DEL, C1), bidi
// override and invalid UTF-8 byte shown escaped, Go-style: "\x1b", "\n",
// "\u202e". Printable text is unchanged, and s is returned as is when it
// has nothing to escape.
func Escape(s string) string {
	if !needs(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r < 0xa0 || bidi(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func needs(s string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || bidi(r) || r == utf8.RuneError && n == 1 {
			return true
		}
		i += n
	}
	return false
}

// bidi reports the Unicode directional overrides and isolates, which
// reorder what a terminal shows.
func bidi(r rune) bool {
	return r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r == 0x200e || r == 0x200f
}

// EscapeLines is Escape for a table cell whose lines are meant: each line
// is escaped and the newlines between them kept (a table prints them in
// the cell's own column, so they cannot forge a row).
func EscapeLines(s string) string {
	if !needs(s) {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = Escape(l)
	}
	return strings.Join(lines, "\n")
}
