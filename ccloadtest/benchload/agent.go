package main

import (
	"fmt"
	"strings"
)

// agentBody is a non-stream request the size and shape of a coding
// agent's turn: the real CLIs' requests (protocol/convert/testdata/real)
// are 4–86 KB, most of it text inside strings with the escapes file
// contents and prompts carry. This one is about 80 KB: a system prompt,
// 24 tools with JSON schemas, and 17 turns of text, tool calls and results.
// The mock answers it as it answers the ~1 KB request (by model), so what
// the scenario adds over "json" is what each gateway spends per byte.
func agentBody(model string) []byte {
	var b strings.Builder
	// One escape in about 90 bytes, as in the recorded Claude Code request
	// (981 backslashes in 85 KB).
	line := `Line of a source file: if err != nil { return fmt.Errorf(read path: %w, err) } // wrap\n`
	fmt.Fprintf(&b, `{"model":%q,"max_tokens":1024,"stream":false,"metadata":{"user_id":"bench-session"},`, model)
	b.WriteString(`"system":[{"type":"text","text":"`)
	b.WriteString(strings.Repeat(`You are a coding agent. Read files before editing them.\n- Keep changes small.\n`, 120))
	b.WriteString(`"}],"tools":[`)
	for i := range 24 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"tool_%d","description":"%s","input_schema":{"type":"object","additionalProperties":false,"required":["path"],"properties":{"path":{"type":"string","description":"Absolute path of the file."},"limit":{"type":"integer","minimum":1},"mode":{"type":"string","enum":["read","write","append"]}}}}`,
			i, strings.Repeat(`Runs one step of the task and reports \"what happened\".\n`, 10))
	}
	b.WriteString(`],"messages":[`)
	for i := range 17 {
		if i > 0 {
			b.WriteByte(',')
		}
		switch {
		case i == 0:
			fmt.Fprintf(&b, `{"role":"user","content":[{"type":"text","text":"%s"}]}`, strings.Repeat(line, 60))
		case i%2 == 0: // the file the previous turn asked for
			fmt.Fprintf(&b, `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%02d","content":"%s"}]}`, i-1, strings.Repeat(line, 60))
		default:
			fmt.Fprintf(&b, `{"role":"assistant","content":[{"type":"text","text":"Reading it."},{"type":"tool_use","id":"toolu_%02d","name":"tool_1","input":{"path":"/src/main.go","limit":200}}]}`, i)
		}
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}
