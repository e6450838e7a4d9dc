package count

import (
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer/codec"
)

// Piece cache bounds. Pieces are mostly words and punctuation runs, so a few
// tens of thousands cover the vocabulary of a coding session; the map is
// dropped and refilled when it grows past cacheMaxEntries, which bounds it to
// a few MB whatever the traffic.
const (
	cacheMaxPiece   = 32 // bytes; longer pieces (rare) are counted directly
	cacheMaxEntries = 1 << 16
)

// bpe counts o200k_base tokens. The encoding's ranks are compiled into the
// tokenizer module (codec/o200k_base_vocab.go), so nothing is read or fetched
// at run time; building the rank map costs ~80 ms and is done once, on first
// use.
type bpe struct {
	codec *codec.Codec

	mu    sync.RWMutex
	cache map[string]int32 // piece -> tokens
}

// encoder returns the shared encoder, building it on first use. It names
// the o200k_base codec itself rather than asking tokenizer.Get for it:
// Get links all four encodings' rank tables into the binary: 4.7 MiB more
// of code and strings that nothing runs.
var encoder = sync.OnceValue(func() *bpe {
	return &bpe{codec: codec.NewO200kBase(), cache: make(map[string]int32, 4096)}
})

// count returns the number of o200k_base tokens of s, exactly as the
// tokenizer library counts them (TestSplitMatchesLibrary), but without its
// regex: s is cut into pieces by splitter and each piece's count comes from
// the cache or, once, from the library.
func (b *bpe) count(s string) int {
	if s == "" {
		return 0
	}
	if !utf8.ValidString(s) {
		s = replaceInvalid(s)
	}
	var missBuf [16]string
	miss := missBuf[:0]
	n := 0
	sp := splitter{s: s}
	b.mu.RLock()
	for {
		piece, ok := sp.next()
		if !ok {
			break
		}
		if len(piece) <= cacheMaxPiece {
			if v, hit := b.cache[piece]; hit {
				n += int(v)
				continue
			}
		}
		miss = append(miss, piece)
	}
	b.mu.RUnlock()
	if len(miss) == 0 {
		return n
	}
	counts := make([]int32, len(miss))
	cacheable := false
	for i, p := range miss {
		counts[i] = int32(b.pieceCount(p))
		n += int(counts[i])
		cacheable = cacheable || len(p) <= cacheMaxPiece
	}
	if !cacheable {
		return n
	}
	b.mu.Lock()
	if len(b.cache)+len(miss) > cacheMaxEntries {
		clear(b.cache)
	}
	for i, p := range miss {
		if len(p) <= cacheMaxPiece {
			b.cache[strings.Clone(p)] = counts[i]
		}
	}
	b.mu.Unlock()
	return n
}

// pieceCount runs the library on one piece. Its regex splits a piece into
// itself, so this is the piece's byte-pair count. regexp2 only fails on a
// match timeout, which this codec does not set; should it ever fail, a piece
// is charged one token per two bytes, more than BPE ever gives.
func (b *bpe) pieceCount(p string) int {
	n, err := b.codec.Count(p)
	if err != nil {
		return (len(p) + 1) / 2
	}
	return n
}

// replaceInvalid replaces each invalid byte with U+FFFD, as the library sees
// text (it converts the string to runes before matching).
func replaceInvalid(s string) string {
	var sb strings.Builder
	sb.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			sb.WriteRune(utf8.RuneError)
		} else {
			sb.WriteString(s[i : i+n])
		}
		i += n
	}
	return sb.String()
}
