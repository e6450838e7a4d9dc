package importer

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"unicode"
)

// slug turns a name into [a-z0-9-]: letters lowercased, runs of anything
// else one "-". When that drops letters (a Chinese channel name, say), a
// short hash of the whole name is appended, so "Gemini 备用" and "Gemini
// 主力" stay apart and the same input always gets the same name: runtime
// state is keyed by it.
func slug(s string) string {
	var b strings.Builder
	dash, lost := false, false
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
			continue
		case r > unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			lost = true
		}
		dash = true
	}
	out := b.String()
	if len(out) > 60 {
		out = strings.TrimRight(out[:60], "-")
	}
	if lost || out == "" {
		sum := sha256.Sum256([]byte(s))
		if out == "" {
			out = "channel"
		}
		out += "-" + hex.EncodeToString(sum[:3])
	}
	return out
}

// namer hands out unique channel names in input order: the second "x"
// becomes "x-2", and so on.
type namer map[string]bool

func (n namer) unique(base string) string {
	name := base
	for i := 2; n[name]; i++ {
		name = base + "-" + strconv.Itoa(i)
	}
	n[name] = true
	return name
}

// envName is the variable that replaces a channel's i-th key (1-based):
// "anthropic-main" -> ANTHROPIC_MAIN_KEY_1.
func envName(channel string, i int) string {
	v := strings.ToUpper(strings.ReplaceAll(channel, "-", "_"))
	if v == "" || v[0] >= '0' && v[0] <= '9' {
		v = "CH_" + v
	}
	return v + "_KEY_" + strconv.Itoa(i)
}

// oneLine collapses whitespace (newlines included) so a value fits in a
// comment line, and shortens it to max bytes on a rune boundary.
func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= max {
		return s
	}
	cut := max - 3
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// secretish reports whether a setting's name says its value is a
// credential or may hold one (a URL with a password), so notes show the
// name only.
func secretish(name string) bool {
	n := strings.ToLower(name)
	for _, w := range []string{"key", "token", "secret", "password", "passwd", "credential", "auth", "url", "dsn", "host"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}
