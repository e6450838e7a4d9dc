package protocol

import (
	"math/bits"
	"unicode/utf8"
)

const jsonHex = "0123456789abcdef"

// AppendJSONString appends s as a JSON string literal. Control characters are escaped,
// invalid UTF-8 becomes U+FFFD (as encoding/json does) and <, >, & stay
// literal, as the upstream APIs send them.
func AppendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		i = plainEnd(s, i)
		if i == len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
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

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// plainEnd is the index of the first byte of s at or after i that
// AppendJSONString must look at (a quote, a backslash, a control byte or
// the start of a multi-byte rune), or len(s). It passes eight plain bytes
// at a time: most of what the converters write is prompt and file text.
// The lowest byte the has-zero/has-less tests mark is exact (a false mark
// only follows a true one).
func plainEnd(s string, i int) int {
	for i+8 <= len(s) {
		w := s[i : i+8]
		x := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
		q := x ^ ('"' * ones)
		b := x ^ ('\\' * ones)
		if m := ((q-ones)&^q | (b-ones)&^b | (x-0x20*ones)&^x | x) & highs; m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			return i
		}
	}
	return i
}
