package count

import (
	"strconv"
	"strings"
)

// modelID is the family and version read from a model name:
// "claude-opus-4-1-20250805" is {opus 4 1}, "claude-3-5-sonnet-20241022"
// {sonnet 3 5}, "gemini-2.5-flash" {flash 2 5}. Dates, snapshot tags (v1,
// @20241022) and provider prefixes (anthropic., us.anthropic.) are ignored.
type modelID struct {
	family       string
	major, minor int
}

var modelFamilies = []string{"opus", "sonnet", "haiku", "fable", "mythos", "pro", "flash"}

func parseModel(name string) modelID {
	var m modelID
	nums := 0
	for f := range strings.FieldsFuncSeq(strings.ToLower(name), func(r rune) bool {
		return r == '-' || r == '.' || r == '@' || r == ':' || r == '/' || r == '_'
	}) {
		if n, err := strconv.Atoi(f); err == nil && len(f) <= 2 {
			switch nums {
			case 0:
				m.major = n
			case 1:
				m.minor = n
			}
			nums++
			continue
		}
		for _, fam := range modelFamilies {
			if f == fam && m.family == "" {
				m.family = fam
			}
		}
	}
	return m
}

func (m modelID) atLeast(major, minor int) bool {
	return m.major > major || m.major == major && m.minor >= minor
}

// Claude text factors: Claude tokens per o200k_base token. Anthropic does not
// publish its tokenizer. A published comparison of Claude 3.5 Sonnet's and
// GPT-4o's tokenizers on the same inputs found +16% tokens on English prose,
// +21% on math and +30% on Python code (VentureBeat, "Hidden costs in AI
// deployment: Why Claude models may be 20-30% more expensive than GPT in
// enterprise settings", May 2025); gateway traffic (coding agents) is mostly
// code and instructions, so we take 1.2. Anthropic documents that the
// tokenizer introduced with Claude Opus 4.7, used by "Claude 4.7 and later
// models", produces roughly 30% more tokens for the same text (token counting
// guide, platform.claude.com/docs/en/build-with-claude/token-counting).
const (
	claudeFactor    = 1.2
	claudeNewFactor = claudeFactor * 1.3
)

// claudeToolPrompt is the tool-use system prompt Anthropic adds when a
// request has tools, by model, for tool_choice auto/none and any/tool
// (platform.claude.com/docs/en/agents-and-tools/tool-use/overview#pricing,
// revision of 2026-09; the 3.x rows from the 2024-2025 revisions).
var claudeToolPrompt = []struct {
	family       string
	major, minor int
	auto, any    int
}{
	{"opus", 5, 0, 286, 406},
	{"opus", 4, 8, 290, 410},
	{"opus", 4, 7, 675, 804},
	{"opus", 4, 6, 497, 589},
	{"opus", 4, 5, 496, 588},
	{"opus", 4, 1, 313, 315},
	{"opus", 4, 0, 313, 315},
	{"sonnet", 5, 0, 354, 474},
	{"sonnet", 4, 6, 497, 589},
	{"sonnet", 4, 5, 496, 588},
	{"sonnet", 4, 0, 313, 315},
	{"haiku", 4, 5, 496, 588},
	{"haiku", 3, 5, 264, 355},
	{"sonnet", 3, 7, 346, 313},
	{"sonnet", 3, 5, 346, 313},
	{"opus", 3, 0, 530, 281},
	{"sonnet", 3, 0, 159, 235},
	{"haiku", 3, 0, 264, 340},
}

// claudeProfile is how a Claude model counts.
type claudeProfile struct {
	factor             float64
	toolAuto, toolAny  int
	newTokenizerFamily bool
}

func claudeModel(name string) claudeProfile {
	m := parseModel(name)
	newer := m.family == "fable" || m.family == "mythos" || m.atLeast(4, 7)
	p := claudeProfile{factor: claudeFactor, toolAuto: 346, toolAny: 313, newTokenizerFamily: newer}
	if newer {
		// Unlisted newer models (Fable, Mythos, later releases) take the
		// newest listed row, Claude Opus 5.
		p.factor, p.toolAuto, p.toolAny = claudeNewFactor, 286, 406
	}
	for _, r := range claudeToolPrompt {
		if r.family == m.family && r.major == m.major && r.minor == m.minor {
			p.toolAuto, p.toolAny = r.auto, r.any
			break
		}
	}
	return p
}
