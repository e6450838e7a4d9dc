package affinity

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"unsafe"

	"github.com/tidwall/gjson"

	"github.com/ccload/ccload/protocol"
	"github.com/ccload/ccload/protocol/jsonwalk"
)

// Body returns a top-level member of a request body by name. The engine
// passes one over members it found in a single walk of the body (an
// agent's request runs to hundreds of kilobytes); Members reads raw bytes.
type Body func(name string) gjson.Result

// Members is a Body over raw JSON bytes.
func Members(body []byte) Body {
	return func(name string) gjson.Result { return gjson.GetBytes(body, name) }
}

// Source names where a session identity came from, one per step of
// Identify's order (docs/routing.md, "Cache-aware routing"); kept for
// tests and debugging.
type Source string

const (
	SourceCacheKey      Source = "prompt_cache_key"         // OpenAI Chat / Responses body
	SourceClaudeHeader  Source = "x-claude-code-session-id" // Claude Code
	SourceClaudeUserID  Source = "metadata.user_id"         // Claude Code's session inside user_id
	SourceThreadHeader  Source = "thread-id"                // Codex
	SourceSessionHeader Source = "session-id"               // Codex, and x-session-id from others
	SourceUser          Source = "user"                     // OpenAI Chat / Responses body
	SourceFingerprint   Source = "fingerprint"              // system prompt + first user turn
)

// Identity is the session a request belongs to. ID is empty when nothing
// identifies one (a request with no conversation at all).
type Identity struct {
	ID     string
	Source Source
}

// Identify names the session of a request, trying in order: the client's
// own prompt cache key, Claude Code's session header and the session inside
// its metadata.user_id, Codex's thread-id and session-id headers (and
// x-session-id), the OpenAI `user` field, and last a fingerprint of the
// system instruction and the first user turn, which is stable across the
// turns of one conversation because agents only ever append to it.
// header looks a request header up by name (case-insensitive); body reads
// the request body's top-level members. The ID shares no memory with the
// body, so keeping it does not keep the body.
func Identify(fam protocol.Family, header func(string) string, body Body) Identity {
	if fam == protocol.OpenAI || fam == protocol.Responses {
		if v := body("prompt_cache_key"); v.Type == gjson.String && v.Str != "" {
			return Identity{strings.Clone(v.Str), SourceCacheKey}
		}
	}
	if v := header("x-claude-code-session-id"); v != "" {
		return Identity{v, SourceClaudeHeader}
	}
	if fam == protocol.Anthropic {
		if id := claudeSession(body("metadata").Get("user_id").Str); id != "" {
			return Identity{strings.Clone(id), SourceClaudeUserID}
		}
	}
	if v := header("thread-id"); v != "" {
		return Identity{v, SourceThreadHeader}
	}
	for _, h := range []string{"session-id", "x-session-id"} {
		if v := header(h); v != "" {
			return Identity{v, SourceSessionHeader}
		}
	}
	if fam == protocol.OpenAI || fam == protocol.Responses {
		if v := body("user"); v.Type == gjson.String && v.Str != "" {
			return Identity{strings.Clone(v.Str), SourceUser}
		}
	}
	if fp := fingerprint(fam, body); fp != "" {
		return Identity{fp, SourceFingerprint}
	}
	return Identity{}
}

// claudeSession finds the session id Claude Code puts in metadata.user_id:
// newer versions send a JSON object as a string
// ({"device_id":…,"session_id":…}), older ones
// "user_<hash>_account_<uuid>_session_<uuid>".
func claudeSession(userID string) string {
	if userID == "" {
		return ""
	}
	if strings.HasPrefix(userID, "{") {
		var v struct {
			SessionID string `json:"session_id"`
		}
		if json.Unmarshal([]byte(userID), &v) == nil {
			return v.SessionID
		}
		return ""
	}
	if i := strings.LastIndex(userID, "_session_"); i >= 0 {
		return userID[i+len("_session_"):]
	}
	return ""
}

// withRole is the first element of arr whose role is role, like
// arr.Get(`#(role=="…")`) without parsing a query on every request.
func withRole(arr gjson.Result, role string) gjson.Result {
	var found gjson.Result
	if !arr.IsArray() {
		return found
	}
	// jsonwalk, not ForEach: ForEach finds the end of each element a byte
	// at a time, and the first turn of an agent's conversation runs to
	// tens of kilobytes.
	jsonwalk.Elements(arr.Raw, func(raw string) bool {
		if el := gjson.Parse(raw); el.IsObject() && el.Get("role").Str == role {
			found = el
			return false
		}
		return true
	})
	return found
}

// fingerprint hashes what stays fixed over one conversation: the system
// instruction and the first user turn, in the family's own shape.
func fingerprint(fam protocol.Family, body Body) string {
	var sys, first gjson.Result
	switch fam {
	case protocol.Anthropic:
		sys = body("system")
		first = withRole(body("messages"), "user")
	case protocol.OpenAI:
		msgs := body("messages")
		sys = withRole(msgs, "system")
		if !sys.Exists() {
			sys = withRole(msgs, "developer")
		}
		first = withRole(msgs, "user")
	case protocol.Responses:
		sys = body("instructions")
		in := body("input")
		if in.Type == gjson.String {
			first = in
		} else {
			first = withRole(in, "user")
		}
	case protocol.Gemini:
		sys = body("systemInstruction")
		if !sys.Exists() {
			sys = body("system_instruction")
		}
		first = withRole(body("contents"), "user")
		if !first.Exists() {
			first = body("contents").Get("0")
		}
	}
	if !first.Exists() {
		return ""
	}
	h := sha256.New()
	h.Write(bytesOf(string(fam)))
	h.Write([]byte{0})
	h.Write(bytesOf(sys.Raw)) // no copy of a long system prompt
	h.Write([]byte{0})
	h.Write(bytesOf(first.Raw))
	var sum [sha256.Size]byte
	return "fp:" + hex.EncodeToString(h.Sum(sum[:0])[:12])
}

// bytesOf is s's bytes without a copy, for a hash to read. (io.WriteString
// copied each string: the hash has no WriteString, and an agent's system
// prompt is tens of KB on every request.)
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }
