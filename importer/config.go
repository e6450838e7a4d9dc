package importer

import (
	"strings"
	"time"
)

// Format names an input format.
type Format string

// The formats Read understands.
const (
	FormatCCLoadCSV Format = "ccload-csv" // ccLoad's channel CSV export
	FormatLiteLLM   Format = "litellm"    // LiteLLM proxy config.yaml
)

// Formats lists the formats in the order they are documented.
var Formats = []Format{FormatCCLoadCSV, FormatLiteLLM}

// describe is the human name of a format, for comments and messages.
func (f Format) describe() string {
	switch f {
	case FormatCCLoadCSV:
		return "ccLoad channel CSV export"
	case FormatLiteLLM:
		return "LiteLLM proxy config"
	}
	return string(f)
}

// Config is what a reader extracted from another gateway's file: the parts
// of a ccload file it can express, and notes for what it cannot.
type Config struct {
	Format   Format
	Notes    []string   // top-of-file comments: what was not carried over, and why
	Settings []Setting  // routing values carried over, in the order found
	Channels []*Channel // in input order; names unique
	Pricing  []Price    // per-model prices carried over
}

// Setting is one value outside channels, e.g. routing.max_attempts.
type Setting struct {
	Path    []string // keys from the top of the file: {"routing", "max_attempts"}
	Value   any      // int, float64, bool or string (a duration is a string)
	Comment string   // where it came from
}

// Channel is one ccload channel to write. Zero values mean the ccload
// default and are not written.
type Channel struct {
	Name           string   // unique, [a-z0-9-]
	Comments       []string // written above the channel, one line each
	Notes          []string // what was not carried over, listed after Comments
	Priority       int
	Weight         int // 0 = default (1)
	URLs           []URL
	Keys           []Value
	KeyStrategy    string // "" = default (round_robin)
	Models         []Model
	RPMLimit       int
	MaxConcurrency int
	DailyCostLimit float64
	CostMultiplier *float64 // nil = default (1.0)
	Headers        []Header // rewrite.headers
	Check          *Check
	Disabled       bool
	LineComments   map[string]string // field name -> comment after its value
	// OAuth and Accounts make a subscription-account channel (ccLoad's
	// codex_oauth and xai_oauth rows); its credential goes to the database with
	// `ccload login`, never into the file.
	OAuth    string
	Accounts []string
}

// URL is one URL of a channel.
type URL struct {
	URL       Value
	Exact     bool
	Protocols []string // ccload names: anthropic, openai, responses, gemini
}

// Model is one model of a channel.
type Model struct {
	Name     string // what clients ask for
	Upstream string // "" or Name = not renamed
	Disabled bool
}

// Header is one rewrite.headers rule.
type Header struct {
	Action string // override | remove
	Name   string
	Value  Value // override only
}

// Check is a channel's scheduled probe.
type Check struct {
	Model string
	Every time.Duration // 0 = default
}

// Price is USD per million tokens for one model.
type Price struct {
	Model                                string
	Input, Output, CacheRead, CacheWrite float64
	Comment                              string
}

// Value is a string as ccload will read it: Text is in ccload's syntax
// (literal "$" escaped, ${VAR} references), or Secret holds a literal
// secret, which Render writes as it is or replaces by a reference.
type Value struct {
	Text   string
	Secret string
}

// Lit is the literal string s.
func Lit(s string) Value { return Value{Text: escapeDollar(s)} }

// Env is a reference to the environment variable name.
func Env(name string) Value { return Value{Text: "${" + name + "}"} }

// SecretValue is a literal secret (a key found in the input).
func SecretValue(s string) Value { return Value{Secret: s} }

// Join concatenates values that are not secret, e.g. a URL built from an
// ${API_BASE} reference and a literal path.
func Join(parts ...Value) Value {
	var v Value
	for _, p := range parts {
		if p.Secret != "" {
			panic("importer.Join: secret part")
		}
		v.Text += p.Text
	}
	return v
}

// IsSecret reports whether v holds a literal secret.
func (v Value) IsSecret() bool { return v.Secret != "" }

// escapeDollar escapes the "$" that ccload's expansion would read: "$$"
// and "${". Any other "$" is kept as written by the loader.
func escapeDollar(s string) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '$' && i+1 < len(s) && (s[i+1] == '$' || s[i+1] == '{') {
			b.WriteString("$$")
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
