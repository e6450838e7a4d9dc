package engine

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/ccload/ccload/protocol/jsonwalk"
)

// members are the top-level members of a client body that admission and
// session affinity read, found in one walk of the body (perf).
// An agent's request runs to hundreds of kilobytes; a gjson.GetBytes per
// field walked it once per field and copied every member it found. The
// walk is jsonwalk's, over the body itself: the results point into the
// request's body, so nothing taken from members may be kept past the
// request's admission without strings.Clone.
type members struct {
	valid  bool // the body is JSON (RFC 8259; UTF-8 is checkInput's)
	object bool // the body is a JSON object
	// dup is a key the body has twice in one object ("" when none).
	dup string
	// raw holds each member's JSON text ("" when absent): a third of the
	// size of a gjson.Result each, and gjson.Parse of it costs no walk.
	raw [len(memberNames)]string
}

// memberNames are the members read: admission's own, then affinity's
// (engine/affinity: Identify and its fingerprint).
var memberNames = [...]string{
	"model", "stream", "stream_options",
	"prompt_cache_key", "metadata", "user",
	"system", "messages", "instructions", "input",
	"systemInstruction", "system_instruction", "contents",
}

// readMembers walks body once, checking that it is JSON as it goes. A body
// that is not a JSON object has no members. (For an 85 KB Claude Code
// request, gjson's check, its walk and the copy of the body the walk
// needed took about 280 µs; this one pass takes about 40.)
func readMembers(body []byte) *members {
	m := &members{}
	doc := jsonwalk.View(body)
	m.valid, m.dup = jsonwalk.ValidUnique(doc, func(k, v string) {
		if strings.IndexByte(k, '\\') >= 0 {
			k = gjson.Parse(`"` + k + `"`).Str // an escaped name, as gjson.Get reads it
		}
		for i, name := range memberNames {
			// The first of duplicate keys wins, as with gjson.Get; a body
			// with any is refused (checkInput).
			if k == name && m.raw[i] == "" {
				m.raw[i] = v
				break
			}
		}
	})
	t := strings.TrimLeft(doc, " \t\r\n")
	m.object = t != "" && t[0] == '{'
	return m
}

// get returns the member called name; it must be one of memberNames.
func (m *members) get(name string) gjson.Result {
	for i, n := range memberNames {
		if n == name {
			return gjson.Parse(m.raw[i])
		}
	}
	panic("engine: member " + name + " is not read by readMembers")
}

// checkInput is the strict reading of a client body every family gets
// before anything else looks at it: valid UTF-8, one JSON
// object, and the fields the gateway itself reads typed as the protocols
// define them. A body that fails is the client's fault: answered 400 in its
// error shape, sent to no upstream, cooling nothing.
func checkInput(body []byte, m *members) *clientError {
	if !utf8.Valid(body) {
		return &clientError{Status: 400, Msg: "request body is not valid UTF-8"}
	}
	if !m.valid {
		return &clientError{Status: 400, Msg: "request body is not valid JSON"}
	}
	if !m.object {
		return &clientError{Status: 400, Msg: "request body is not a JSON object"}
	}
	if m.dup != "" {
		// ccload reads the first of two keys, many upstreams the last: a
		// second "model" would reach a model the token may not use, a
		// second "stream" would stream what is logged and billed as not.
		return &clientError{Status: 400, Msg: "request body has the key " + strconv.Quote(m.dup) + " twice in one object"}
	}
	if m := m.get("model"); m.Exists() {
		if m.Type != gjson.String || m.Str == "" {
			return &clientError{Status: 400, Msg: `"model" must be a non-empty string`}
		}
		if strings.IndexFunc(m.Str, isControl) >= 0 {
			return &clientError{Status: 400, Msg: `"model" holds control characters`}
		}
	}
	for _, f := range []struct {
		path string
		v    gjson.Result
	}{{"stream", m.get("stream")}, {"stream_options.include_usage", m.get("stream_options").Get("include_usage")}} {
		if f.v.Exists() && f.v.Type != gjson.True && f.v.Type != gjson.False {
			return &clientError{Status: 400, Msg: `"` + f.path + `" must be true or false`}
		}
	}
	return nil
}

func isControl(r rune) bool { return r < ' ' || r == 0x7f || r >= 0x80 && r < 0xa0 }
