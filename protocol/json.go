package protocol

import (
	"unicode/utf8"

	"github.com/ccload/ccload/protocol/jsonwalk"
)

const jsonHex = "0123456789abcdef"

// AppendJSONString appends s as a JSON string literal. Control characters are escaped,
// invalid UTF-8 becomes U+FFFD (as encoding/json does) and <, >, & stay
// literal, as the upstream APIs send them.
func AppendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		// Plain passes the bytes that need nothing, eight at a time.
		if i = jsonwalk.Plain(s, i, true); i == len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', jsonHex[c>>4], jsonHex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
