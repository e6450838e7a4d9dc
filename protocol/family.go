// Package protocol holds the wire formats of the four API families ccload
// speaks (Anthropic Messages, OpenAI Chat Completions, OpenAI Responses and
// Gemini generateContent): their endpoints, credential headers, error shapes
// and server-sent-event framing. It imports nothing of ccload's own.
package protocol

import "fmt"

// Family is one wire protocol family.
type Family string

// The four families. The string values are the names used in the config file.
const (
	Anthropic Family = "anthropic" // POST /v1/messages
	OpenAI    Family = "openai"    // POST /v1/chat/completions
	Responses Family = "responses" // POST /v1/responses (what Codex speaks)
	Gemini    Family = "gemini"    // POST /v1beta/models/{model}:generateContent
)

// Families lists every family in a fixed order (tables, matrices, tests).
var Families = []Family{Anthropic, OpenAI, Responses, Gemini}

// ParseFamily accepts a config or CLI name. "codex" is an alias of Responses
// (files imported from ccLoad use it); "chat" an alias of OpenAI.
func ParseFamily(s string) (Family, error) {
	switch s {
	case "anthropic", "claude":
		return Anthropic, nil
	case "openai", "chat":
		return OpenAI, nil
	case "responses", "codex":
		return Responses, nil
	case "gemini":
		return Gemini, nil
	}
	return "", fmt.Errorf("unknown protocol %q (want anthropic, openai, responses or gemini)", s)
}

// String returns the config name of the family.
func (f Family) String() string { return string(f) }
