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

// urlUserinfoRe finds credentials inside URLs quoted in free text
// (transport errors quote the URL they dialled).
var urlUserinfoRe = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.\-]*://)[^/\s:@"']+:[^/\s@"']+@`)

// addressRes find upstream addresses in text meant for a client: URLs and
// host:port pairs (design: no upstream address reaches a client).
var addressRes = []*regexp.Regexp{
	regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.\-]*://[^\s"'<>]+`),
	regexp.MustCompile(`\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\b`),
	regexp.MustCompile(`\[[0-9A-Fa-f:]+\](?::\d+)?`),
	regexp.MustCompile(`\b[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)+:\d{2,5}\b`),
}

// Redactor is the one point every upstream-derived string passes through
// before it reaches a client, a log row, a cooldown, an event or stdout.
// Beyond the credential patterns of cleanMessage it removes
// the exact secrets it was built with: every channel key and URL
// credential of the config, because an upstream may echo the key it got
// verbatim, in a shape no pattern knows. A nil *Redactor applies the
// patterns only.
type Redactor struct {
	exact *strings.Replacer
}

// minSecret is the shortest secret replaced verbatim; shorter ones would
// hit ordinary words.
const minSecret = 8

// NewRedactor builds a Redactor for secrets (duplicates and short ones are
// ignored).
func NewRedactor(secrets []string) *Redactor {
	seen := map[string]bool{}
	var pairs []string
	for _, s := range secrets {
		if len(s) < minSecret || seen[s] {
			continue
		}
		seen[s] = true
		pairs = append(pairs, s, redacted)
	}
	if len(pairs) == 0 {
		return &Redactor{}
	}
	return &Redactor{exact: strings.NewReplacer(pairs...)}
}

func (r *Redactor) replaceExact(s string) string {
	if r == nil || r.exact == nil {
		return s
	}
	return r.exact.Replace(s)
}

// Message is s fit for a log row, a cooldown reason or an event: secrets
// removed, whitespace collapsed, at most maxMessage bytes.
func (r *Redactor) Message(s string) string {
	if s == "" {
		return "" // every successful attempt's; the regexps below cost allocations even on nothing
	}
	return cleanMessage(urlUserinfoRe.ReplaceAllString(r.replaceExact(s), "${1}"+redacted+"@"))
}

// Client is Message for a client's eyes: upstream URLs and host:port pairs
// are also removed.
func (r *Redactor) Client(s string) string {
	s = r.Message(s)
	for _, re := range addressRes {
		s = re.ReplaceAllString(s, "[upstream]")
	}
	return s
}

// Body is an upstream body (or stream event) with secrets removed and
// nothing else changed: it is relayed to the client as it is. Key-like
// runs are left alone here; in JSON they may be ids the client needs.
func (r *Redactor) Body(b []byte) []byte {
	s := r.replaceExact(string(b))
	s = urlUserinfoRe.ReplaceAllString(s, "${1}"+redacted+"@")
	for _, re := range secretRes {
		s = re.re.ReplaceAllString(s, re.repl)
	}
	return []byte(s)
}
