package count

import (
	"math"

	"github.com/tidwall/gjson"
)

// Structural costs of a Claude prompt, in Claude tokens. The first five are
// fitted to Anthropic's published count_tokens examples (reference table in
// doc.go); the rest are assumptions of the same order, not calibrated.
const (
	claudeBase     = 3  // start of the prompt and the assistant turn being asked for
	claudePerMsg   = 3  // role marker and separators of a message
	claudePerTool  = 22 // wrapping of one tool definition (keys, delimiters)
	claudeThinking = 23 // thinking enabled or adaptive
	// claudeImageMax is the size of the largest image Claude takes without
	// scaling it down ("approximately 1,600 tokens", vision guide), charged
	// for images whose size is unknown (URLs, files, undecodable data).
	claudeImageMax = 1600

	claudePerToolUse    = 10   // assumed: tool call delimiters and name
	claudePerToolResult = 6    // assumed: tool result delimiters
	claudePerDocument   = 6    // assumed: document delimiters, around title and text
	claudePDFPage       = 2250 // midpoint of "1,500-3,000 tokens per page" (PDF support guide)
)

// Anthropic counts an Anthropic Messages request body (as sent to
// count_tokens: model, system, messages, tools, tool_choice, thinking) and
// returns input_tokens, the way Claude would count it; doc.go describes the
// model and its measured error. It fails with ErrInvalid, naming the field,
// when the body is not a Messages request; unknown fields and block types are
// counted by their text, never refused.
func Anthropic(body []byte) (int, error) {
	b := encoder()
	root, err := parseObject(body)
	if err != nil {
		return 0, err
	}
	prof := claudeModel(root.Get("model").Str)
	t := tally{b: b, fixed: claudeBase}

	if err := claudeSystem(&t, root.Get("system")); err != nil {
		return 0, err
	}
	if err := claudeTools(&t, root.Get("tools"), root.Get("tool_choice"), prof); err != nil {
		return 0, err
	}
	switch root.Get("thinking.type").Str {
	case "enabled", "adaptive":
		t.fixed += claudeThinking
	}

	msgs := root.Get("messages")
	if !msgs.IsArray() {
		return 0, invalid("messages: want an array")
	}
	list := msgs.Array()
	turn := claudeCurrentTurn(list)
	for i, m := range list {
		if err := claudeMessage(&t, m, i, i > turn); err != nil {
			return 0, err
		}
	}
	return t.total(prof.factor), nil
}

func claudeSystem(t *tally, v gjson.Result) error {
	switch {
	case !v.Exists() || v.Type == gjson.Null:
	case v.Type == gjson.String:
		t.addText(v.Str)
	case v.IsArray():
		for i, blk := range v.Array() {
			if !blk.IsObject() {
				return invalid("system[%d]: want a text block", i)
			}
			t.addText(blk.Get("text").Str)
		}
	default:
		return invalid("system: want a string or an array of text blocks")
	}
	return nil
}

// claudeTools counts the tool definitions and, when there is at least one,
// the tool-use system prompt of the model for the tool choice.
//
// A custom tool is shown to the model as its name, description and input
// schema in a fixed wrapper: we count those three as text (the schema
// compacted) plus claudePerTool. A server tool (web_search, bash, ...) is
// replaced by Anthropic's own definition, which is not published: we count
// the client's definition the same way.
func claudeTools(t *tally, tools, choice gjson.Result, prof claudeProfile) error {
	if !tools.Exists() || tools.Type == gjson.Null {
		return nil
	}
	if !tools.IsArray() {
		return invalid("tools: want an array")
	}
	list := tools.Array()
	for i, tool := range list {
		if !tool.IsObject() {
			return invalid("tools[%d]: want an object", i)
		}
		t.fixed += claudePerTool
		t.addText(tool.Get("name").Str)
		t.addText(tool.Get("description").Str)
		if s := tool.Get("input_schema"); s.Exists() {
			t.addJSON(s)
			continue
		}
		tool.ForEach(func(k, v gjson.Result) bool { // server tool: its settings
			if k.Str != "name" && k.Str != "type" && k.Str != "cache_control" {
				t.addJSON(v)
			}
			return true
		})
	}
	if len(list) == 0 {
		return nil
	}
	switch choice.Get("type").Str {
	case "any", "tool":
		t.fixed += prof.toolAny
	default: // auto, none, unset
		t.fixed += prof.toolAuto
	}
	return nil
}

// claudeCurrentTurn returns the index of the last user message that starts a
// turn (holds anything but tool results). Thinking in assistant messages
// after it belongs to the turn in progress and counts; thinking from earlier
// turns is dropped by the API and does not ("Thinking blocks from previous
// assistant turns are ignored and do not count toward your input tokens",
// token counting guide, 2025 revision).
func claudeCurrentTurn(msgs []gjson.Result) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Get("role").Str != "user" {
			continue
		}
		c := m.Get("content")
		if !c.IsArray() {
			return i
		}
		prompt := false
		c.ForEach(func(_, blk gjson.Result) bool {
			prompt = blk.Get("type").Str != "tool_result"
			return !prompt
		})
		if prompt {
			return i
		}
	}
	return -1
}

func claudeMessage(t *tally, m gjson.Result, i int, current bool) error {
	if !m.IsObject() {
		return invalid("messages[%d]: want an object", i)
	}
	switch m.Get("role").Str {
	case "user", "assistant", "system":
	default:
		return invalid("messages[%d].role: want user or assistant", i)
	}
	t.fixed += claudePerMsg
	c := m.Get("content")
	switch {
	case c.Type == gjson.String:
		t.addText(c.Str)
		return nil
	case !c.IsArray():
		return invalid("messages[%d].content: want a string or an array", i)
	}
	for j, blk := range c.Array() {
		if !blk.IsObject() {
			return invalid("messages[%d].content[%d]: want an object", i, j)
		}
		claudeBlock(t, blk, current)
	}
	return nil
}

func claudeBlock(t *tally, blk gjson.Result, current bool) {
	switch blk.Get("type").Str {
	case "text":
		t.addText(blk.Get("text").Str)
	case "image":
		t.fixed += claudeImage(blk.Get("source"))
	case "document":
		claudeDocument(t, blk)
	case "tool_use", "server_tool_use", "mcp_tool_use":
		t.fixed += claudePerToolUse
		t.addText(blk.Get("name").Str)
		t.addJSON(blk.Get("input"))
	case "tool_result", "mcp_tool_result":
		t.fixed += claudePerToolResult
		c := blk.Get("content")
		if c.Type == gjson.String {
			t.addText(c.Str)
			return
		}
		c.ForEach(func(_, inner gjson.Result) bool {
			if inner.IsObject() {
				claudeBlock(t, inner, current)
			}
			return true
		})
	case "thinking":
		if current {
			t.addText(blk.Get("thinking").Str)
		}
	case "redacted_thinking":
		// Encrypted: its size in tokens is not knowable; counts nothing.
	default: // search_result, web_search_tool_result, future types
		t.addStrings(blk)
	}
}

// claudeImage is the cost of an image: width*height/750 once scaled to fit
// (long edge at most 1568 px and at most ~1,600 tokens), per Anthropic's
// vision guide; claudeImageMax when the size is unknown.
func claudeImage(src gjson.Result) int {
	if src.Get("type").Str != "base64" {
		return claudeImageMax
	}
	w, h, ok := imageSize(src.Get("data").Str)
	if !ok {
		return claudeImageMax
	}
	return claudeImageTokens(w, h)
}

func claudeImageTokens(w, h int) int {
	fw, fh := float64(w), float64(h)
	if long := math.Max(fw, fh); long > 1568 {
		fw, fh = fw*1568/long, fh*1568/long
	}
	return min(int(math.Ceil(fw*fh/750)), claudeImageMax)
}

func claudeDocument(t *tally, blk gjson.Result) {
	t.fixed += claudePerDocument
	t.addText(blk.Get("title").Str)
	t.addText(blk.Get("context").Str)
	src := blk.Get("source")
	switch src.Get("type").Str {
	case "text":
		t.addText(src.Get("data").Str)
	case "content":
		c := src.Get("content")
		if c.Type == gjson.String {
			t.addText(c.Str)
			return
		}
		c.ForEach(func(_, inner gjson.Result) bool {
			if inner.IsObject() {
				claudeBlock(t, inner, true)
			}
			return true
		})
	case "base64":
		t.fixed += claudePDFPage * pdfPages(src.Get("data").Str)
	default: // url, file: the page count is not knowable here
		t.fixed += claudePDFPage
	}
}
