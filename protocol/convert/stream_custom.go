package convert

import "unicode/utf8"

// customArgs follows, fragment by fragment, the arguments of a call to a
// custom (freeform) tool that was offered upstream as a function with one
// string argument, {"input": "..."}, so that a Responses client gets the
// input as it is written (response.custom_tool_call_input.delta) rather
// than all at the end. The arguments are JSON, so the characters between
// the quotes of the input string are already the inner text of a JSON
// string literal: a delta is a slice of them, cut only between escape
// sequences (and never inside a UTF-16 surrogate pair, which a client would
// decode as two broken characters).
//
// When the arguments do not start with the input string (a model that
// wrote another key first), nothing is streamed and the whole input goes
// out at the end (customInput).
type customArgs struct {
	args []byte // the arguments text so far
	pos  int    // start of the unsent input text in args; see the states below
}

const (
	customSeeking = 0  // before the opening quote of the input string (pos is 0)
	customOff     = -1 // the arguments do not start {"input":"
	customEnded   = -2 // the input string is complete
)

// reset starts a new call.
func (c *customArgs) reset() { c.args, c.pos = c.args[:0], customSeeking }

// streaming reports whether the input is being streamed (its deltas went
// out, or will), as opposed to sent whole at the end.
func (c *customArgs) streaming() bool { return c.pos > 0 || c.pos == customEnded }

// add appends a fragment of the arguments text and returns the input text
// that is now complete and not yet sent, as the inner text of a JSON string
// literal ("" for none). The result aliases c's buffer until the next add.
func (c *customArgs) add(frag string) string {
	c.args = append(c.args, frag...)
	if c.pos == customSeeking {
		n, ok := customPrefix(c.args)
		switch {
		case !ok:
			c.pos = customOff
		case n > 0:
			c.pos = n
		}
	}
	if c.pos <= 0 {
		return ""
	}
	start := c.pos
	i := start
	for i < len(c.args) {
		ch := c.args[i]
		if ch == '"' {
			c.pos = customEnded
			return string(c.args[start:i])
		}
		if ch != '\\' {
			i++
			continue
		}
		n := escapeLen(c.args[i:])
		if n == 0 || i+n > len(c.args) {
			break // incomplete escape: wait for the rest
		}
		i += n
	}
	// Nor inside a UTF-8 sequence (a fragment may end in one).
	for j := i - 1; j >= start && j >= i-utf8.UTFMax; j-- {
		if utf8.RuneStart(c.args[j]) {
			if !utf8.FullRune(c.args[j:i]) {
				i = j
			}
			break
		}
	}
	c.pos = i
	return string(c.args[start:i])
}

// customPrefix matches args against `{"input":"` with JSON whitespace
// allowed between tokens. It returns the offset just after the opening
// quote of the value, 0 when args is still a prefix of such a start, and
// ok false when it cannot be one.
func customPrefix(args []byte) (int, bool) {
	const want = `{"input":"`
	i, j := 0, 0
	for i < len(args) {
		c := args[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			// Whitespace only between tokens: before {, after {, around :.
			if j == 0 || j == 1 || j == 8 || j == 9 {
				i++
				continue
			}
			return 0, false
		}
		if c != want[j] {
			return 0, false
		}
		i, j = i+1, j+1
		if j == len(want) {
			return i, true
		}
	}
	return 0, true
}

// escapeLen is the length of the escape sequence at the start of b (b[0] is
// a backslash), a high surrogate taking its low one with it; 0 when b is
// too short to tell yet.
func escapeLen(b []byte) int {
	if len(b) < 2 {
		return 0
	}
	if b[1] != 'u' {
		return 2
	}
	if len(b) < 6 {
		return 0
	}
	if h := b[2] | 0x20; h == 'd' && (b[3]|0x20 >= '8' && b[3]|0x20 <= '9' || b[3]|0x20 == 'a' || b[3]|0x20 == 'b') {
		// \uD800-\uDBFF: a high surrogate, its pair follows.
		if len(b) < 12 {
			return 0
		}
		return 12
	}
	return 6
}
