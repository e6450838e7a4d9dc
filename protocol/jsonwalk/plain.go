package jsonwalk

import "math/bits"

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// Plain is the index of the first byte of s at or after i that a JSON
// string cannot hold as it is: a quote, a backslash or a control byte,
// and with ascii also the first byte of any multi-byte rune (for an
// encoder that checks UTF-8); len(s) when there is none. The checker
// (Valid) and the encoder (protocol.AppendJSONString) both scan with it:
// most of what they see is prompt and file text, and it passes eight such
// bytes at a time, with the has-zero and has-less word tests. The lowest
// byte those tests mark is exact (a false mark only follows a true one).
func Plain(s string, i int, ascii bool) int {
	var high uint64 // with ascii, the bytes of 0x80 and up mark themselves
	if ascii {
		high = highs
	}
	for i+8 <= len(s) {
		w := s[i : i+8] // one bounds check; the compiler merges the loads
		x := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
		q := x ^ ('"' * ones)
		b := x ^ ('\\' * ones)
		if m := ((q-ones)&^q | (b-ones)&^b | (x-0x20*ones)&^x | x&high) & highs; m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || ascii && c >= 0x80 {
			return i
		}
	}
	return i
}
