package failure

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxMessage bounds Outcome.Message, in bytes.
const maxMessage = 300

const redacted = "[redacted]"

// secretRes match text that looks like a credential. Upstreams echo keys
// (OpenAI: "Incorrect API key provided: sk-proj-****abcd"), and transport
// errors quote URLs that may carry ?key=AIza….
var secretRes = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`(?i)(api key provided:\s*)\S*[^\s.,;]`), "${1}" + redacted},
	{regexp.MustCompile(`(?i)(bearer\s+)[A-Za-z0-9_\-.=:/+~*]+`), "${1}" + redacted},
	{regexp.MustCompile(`(?i)\b((?:x-)?(?:api[_-]?key|key|token|access_token|secret|password))=[^&\s"'<>]+`), "${1}=" + redacted},
	{regexp.MustCompile(`\bsk-[A-Za-z0-9_\-*.]{4,}`), "sk-" + redacted},
	{regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{8,}`), "AIza" + redacted},
}

// longTokenRe finds long runs that may be keys of other shapes; see
// looksRandom.
var longTokenRe = regexp.MustCompile(`[A-Za-z0-9_\-]{40,}`)

// cleanMessage makes upstream text safe and short for logs: credentials
// redacted, whitespace collapsed, cut to maxMessage bytes on a rune boundary.
func cleanMessage(s string) string {
	s = strings.ToValidUTF8(s, "�")
	for _, r := range secretRes {
		s = r.re.ReplaceAllString(s, r.repl)
	}
	s = longTokenRe.ReplaceAllStringFunc(s, func(t string) string {
		if looksRandom(t) {
			return redacted
		}
		return t
	})
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= maxMessage {
		return s
	}
	cut := maxMessage
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// looksRandom tells a key-like token (letters mixed with digits) from a long
// identifier such as generate_content_paid_tier_input_token_count.
func looksRandom(t string) bool {
	var letters, digits int
	for _, r := range t {
		switch {
		case unicode.IsDigit(r):
			digits++
		case unicode.IsLetter(r):
			letters++
		}
	}
	return digits >= 4 && letters >= 4
}
