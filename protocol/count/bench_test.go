package count

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// claudeCodeBody builds a request shaped like a Claude Code turn: a long
// system prompt, 24 tools with paragraph descriptions and schemas, and a
// conversation of tool calls whose results are source code. The text is this
// package's own source (comments as prose, code as file contents), so the
// mix of English and Go is realistic; the body is about 64 KB.
func claudeCodeBody(tb testing.TB) []byte {
	tb.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		tb.Fatalf("glob: %v", err)
	}
	var prose, code []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		code = append(code, string(b))
		for _, line := range strings.Split(string(b), "\n") {
			if l := strings.TrimSpace(line); strings.HasPrefix(l, "// ") {
				prose = append(prose, strings.TrimPrefix(l, "// "))
			}
		}
	}
	text := strings.Join(prose, " ")
	src := strings.Join(code, "\n")
	cut := func(s string, at, n int) string {
		at %= len(s)
		return s[at:min(at+n, len(s))]
	}

	type schemaProp struct {
		Type        string `json:"type"`
		Description string `json:"description"`
	}
	var tools []map[string]any
	for i := range 24 {
		props := map[string]schemaProp{}
		for j := range 4 {
			props[fmt.Sprintf("arg_%d", j)] = schemaProp{"string", cut(text, i*900+j*120, 110)}
		}
		tools = append(tools, map[string]any{
			"name":        fmt.Sprintf("tool_%02d", i),
			"description": cut(text, i*700, 520),
			"input_schema": map[string]any{
				"type": "object", "properties": props, "required": []string{"arg_0"},
				"additionalProperties": false, "$schema": "http://json-schema.org/draft-07/schema#",
			},
		})
	}
	msgs := []map[string]any{{"role": "user", "content": "Read the counting package and explain how pieces are cached."}}
	for i := range 9 {
		id := fmt.Sprintf("toolu_%02d", i)
		msgs = append(msgs,
			map[string]any{"role": "assistant", "content": []map[string]any{
				{"type": "text", "text": cut(text, 5000+i*300, 240)},
				{"type": "tool_use", "id": id, "name": "tool_01", "input": map[string]string{"arg_0": files[i%len(files)]}},
			}},
			map[string]any{"role": "user", "content": []map[string]any{
				{"type": "tool_result", "tool_use_id": id, "content": cut(src, i*2500, 2100)},
			}})
	}
	body, err := json.Marshal(map[string]any{
		"model":    "claude-sonnet-4-5",
		"system":   []map[string]string{{"type": "text", "text": "You are Claude Code."}, {"type": "text", "text": cut(text, 0, 7000)}},
		"tools":    tools,
		"messages": msgs,
	})
	if err != nil {
		tb.Fatal(err)
	}
	return body
}

func TestBenchBodyIsRealistic(t *testing.T) {
	body := claudeCodeBody(t)
	if len(body) < 60<<10 || len(body) > 68<<10 {
		t.Errorf("benchmark body is %d bytes, want about 64 KB", len(body))
	}
	n, err := Anthropic(body)
	if err != nil {
		t.Fatal(err)
	}
	// About 3.5-4.5 bytes of JSON per Claude token for code and English.
	if per := float64(len(body)) / float64(n); per < 2.5 || per > 5 {
		t.Errorf("%d bytes count %d tokens (%.1f bytes/token), outside the plausible range", len(body), n, per)
	}
	t.Logf("%d bytes, 24 tools: %d tokens", len(body), n)
}

// BenchmarkAnthropic counts the 64 KB body with a warm piece cache, the
// steady state of a gateway.
func BenchmarkAnthropic(b *testing.B) {
	body := claudeCodeBody(b)
	if _, err := Anthropic(body); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Anthropic(body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAnthropicCold empties the piece cache before each count: every
// distinct piece goes through the library once.
func BenchmarkAnthropicCold(b *testing.B) {
	body := claudeCodeBody(b)
	enc := encoder()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		b.StopTimer()
		enc.mu.Lock()
		clear(enc.cache)
		enc.mu.Unlock()
		b.StartTimer()
		if _, err := Anthropic(body); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAnthropicParallel(b *testing.B) {
	body := claudeCodeBody(b)
	if _, err := Anthropic(body); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := Anthropic(body); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkLibraryCount is the tokenizer library alone on the same text, for
// comparison: its regex splitter is what the piece splitter replaces.
func BenchmarkLibraryCount(b *testing.B) {
	body := claudeCodeBody(b)
	enc := encoder()
	s := string(body)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		if _, err := enc.codec.Count(s); err != nil {
			b.Fatal(err)
		}
	}
}

func TestConcurrentCounts(t *testing.T) {
	body := claudeCodeBody(t)
	want, err := Anthropic(body)
	if err != nil {
		t.Fatal(err)
	}
	enc := encoder()
	errs := make(chan error, 8)
	for g := range 8 {
		go func() {
			for i := range 5 {
				if g == 0 && i == 2 {
					enc.mu.Lock()
					clear(enc.cache) // a reset while others read
					enc.mu.Unlock()
				}
				if n, err := Anthropic(body); err != nil || n != want {
					errs <- fmt.Errorf("goroutine %d: %d, %v; want %d", g, n, err, want)
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
