package convert

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/ccload/ccload/protocol"
)

// BenchmarkStream converts a long realistic stream (a reasoning block of 300
// deltas, 3000 text deltas of ~24 bytes with some escapes, a tool call in 200
// argument fragments) along every path, plus the native pass-through. It
// reports throughput over the upstream bytes (MB/s) and allocations per
// upstream event. Events are parsed once up front: this measures the
// conversion, not the SSE reader.
func BenchmarkStream(b *testing.B) {
	for _, from := range protocol.Families {
		evs, size := benchEvents(b, from)
		for _, to := range protocol.Families {
			name := string(from) + "-" + string(to)
			if from == to {
				name = "native-" + string(from)
			}
			b.Run(name, func(b *testing.B) {
				b.SetBytes(int64(size))
				b.ReportAllocs()
				var out int
				emit := func(p []byte) { out += len(p) }
				var ms0, ms1 runtime.MemStats
				runtime.ReadMemStats(&ms0)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					s := NewStream(from, to, "client-model")
					for _, ev := range evs {
						if err := s.Event(ev, emit); err != nil {
							b.Fatal(err)
						}
					}
					if err := s.Close(emit); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				runtime.ReadMemStats(&ms1)
				b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/float64(b.N*len(evs)), "allocs/event")
				b.ReportMetric(float64(len(evs)), "events")
			})
		}
	}
}

// benchEvents builds the long stream of family f and splits it into events.
func benchEvents(b *testing.B, f protocol.Family) ([]*protocol.Event, int) {
	raw := benchStream(f)
	var evs []*protocol.Event
	r := protocol.NewReader(bytes.NewReader(raw), 0)
	for {
		ev, err := r.Next()
		if err != nil {
			break
		}
		evs = append(evs, &protocol.Event{Name: bytes.Clone(ev.Name), Data: bytes.Clone(ev.Data), Raw: bytes.Clone(ev.Raw)})
	}
	// The stream must convert cleanly, or the benchmark measures an error path.
	for _, to := range protocol.Families {
		if out, err := runStream(b, f, to, raw, StreamOptions{}); err != nil || len(out) == 0 {
			b.Fatalf("bench stream %s -> %s: %v", f, to, err)
		}
	}
	return evs, len(raw)
}

const (
	benchThinking = 300
	benchText     = 3000
	benchArgs     = 200
)

func benchDelta(i int) string {
	if i%10 == 0 {
		return fmt.Sprintf(`line %d: \"quoted\"\n`, i)
	}
	return fmt.Sprintf("token %05d of the answer ", i)
}

func benchArg(i int) string {
	if i == 0 {
		return `{\"path\":\"`
	}
	if i == benchArgs-1 {
		return `\"}`
	}
	return "segment" + fmt.Sprint(i%10)
}

func benchStream(f protocol.Family) []byte {
	var b strings.Builder
	ev := func(name, data string) {
		if name != "" {
			b.WriteString("event: " + name + "\n")
		}
		b.WriteString("data: " + data + "\n\n")
	}
	switch f {
	case protocol.Anthropic:
		ev("message_start", `{"type":"message_start","message":{"id":"msg_bench","type":"message","role":"assistant","model":"claude","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":900,"cache_creation_input_tokens":0,"cache_read_input_tokens":5000,"output_tokens":1}}}`)
		ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`)
		for i := 0; i < benchThinking; i++ {
			ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"`+benchDelta(i)+`"}}`)
		}
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCkYIBxgCKkBBgRE1mCZV3dUdq8Q2eVhJ1zjRrUNv0S3yGJ9bRkB7l1sPZw=="}}`)
		ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
		ev("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`)
		for i := 0; i < benchText; i++ {
			ev("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"`+benchDelta(i)+`"}}`)
		}
		ev("content_block_stop", `{"type":"content_block_stop","index":1}`)
		ev("content_block_start", `{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_b","name":"read_file","input":{}}}`)
		for i := 0; i < benchArgs; i++ {
			ev("content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"`+benchArg(i)+`"}}`)
		}
		ev("content_block_stop", `{"type":"content_block_stop","index":2}`)
		ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":4200}}`)
		ev("message_stop", `{"type":"message_stop"}`)
	case protocol.OpenAI:
		head := `{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1767225012,"model":"gpt","choices":[{"index":0,"delta":`
		tail := `,"logprobs":null,"finish_reason":null}],"usage":null}`
		ev("", head+`{"role":"assistant","content":""}`+tail)
		for i := 0; i < benchThinking; i++ {
			ev("", head+`{"reasoning_content":"`+benchDelta(i)+`"}`+tail)
		}
		for i := 0; i < benchText; i++ {
			ev("", head+`{"content":"`+benchDelta(i)+`"}`+tail)
		}
		ev("", head+`{"tool_calls":[{"index":0,"id":"call_b","type":"function","function":{"name":"read_file","arguments":""}}]}`+tail)
		for i := 0; i < benchArgs; i++ {
			ev("", head+`{"tool_calls":[{"index":0,"function":{"arguments":"`+benchArg(i)+`"}}]}`+tail)
		}
		ev("", head+`{},"logprobs":null,"finish_reason":"tool_calls"}],"usage":null}`)
		ev("", `{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1767225012,"model":"gpt","choices":[],"usage":{"prompt_tokens":5900,"completion_tokens":4200,"total_tokens":10100,"prompt_tokens_details":{"cached_tokens":5000},"completion_tokens_details":{"reasoning_tokens":700}}}`)
		ev("", "[DONE]")
	case protocol.Responses:
		seq := 0
		rev := func(typ, rest string) {
			ev(typ, fmt.Sprintf(`{"type":%q,"sequence_number":%d,%s}`, typ, seq, rest))
			seq++
		}
		resp := `"response":{"id":"resp_bench","object":"response","created_at":1767225012,"status":"in_progress","model":"gpt","output":[],"usage":null}`
		rev("response.created", resp)
		rev("response.in_progress", resp)
		rev("response.output_item.added", `"output_index":0,"item":{"id":"rs_b","type":"reasoning","summary":[]}`)
		rev("response.reasoning_summary_part.added", `"item_id":"rs_b","output_index":0,"summary_index":0,"part":{"type":"summary_text","text":""}`)
		for i := 0; i < benchThinking; i++ {
			rev("response.reasoning_summary_text.delta", `"item_id":"rs_b","output_index":0,"summary_index":0,"delta":"`+benchDelta(i)+`"`)
		}
		rev("response.reasoning_summary_part.done", `"item_id":"rs_b","output_index":0,"summary_index":0,"part":{"type":"summary_text","text":"..."}`)
		rev("response.output_item.done", `"output_index":0,"item":{"id":"rs_b","type":"reasoning","summary":[{"type":"summary_text","text":"..."}],"encrypted_content":"gAAAAABpVVoh-_x"}`)
		rev("response.output_item.added", `"output_index":1,"item":{"id":"msg_b","type":"message","status":"in_progress","content":[],"role":"assistant"}`)
		rev("response.content_part.added", `"item_id":"msg_b","output_index":1,"content_index":0,"part":{"type":"output_text","annotations":[],"text":""}`)
		for i := 0; i < benchText; i++ {
			rev("response.output_text.delta", `"item_id":"msg_b","output_index":1,"content_index":0,"delta":"`+benchDelta(i)+`","logprobs":[]`)
		}
		rev("response.content_part.done", `"item_id":"msg_b","output_index":1,"content_index":0,"part":{"type":"output_text","annotations":[],"text":"..."}`)
		rev("response.output_item.done", `"output_index":1,"item":{"id":"msg_b","type":"message","status":"completed","content":[],"role":"assistant"}`)
		rev("response.output_item.added", `"output_index":2,"item":{"id":"fc_b","type":"function_call","status":"in_progress","arguments":"","call_id":"call_b","name":"read_file"}`)
		for i := 0; i < benchArgs; i++ {
			rev("response.function_call_arguments.delta", `"item_id":"fc_b","output_index":2,"delta":"`+benchArg(i)+`"`)
		}
		rev("response.output_item.done", `"output_index":2,"item":{"id":"fc_b","type":"function_call","status":"completed","arguments":"{}","call_id":"call_b","name":"read_file"}`)
		rev("response.completed", `"response":{"id":"resp_bench","object":"response","created_at":1767225012,"status":"completed","model":"gpt","output":[],"usage":{"input_tokens":5900,"input_tokens_details":{"cached_tokens":5000},"output_tokens":4200,"output_tokens_details":{"reasoning_tokens":700},"total_tokens":10100}}`)
	case protocol.Gemini:
		tail := `],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 5900,"totalTokenCount": 5900},"modelVersion": "gemini","responseId": "bench"}`
		for i := 0; i < benchThinking; i++ {
			ev("", `{"candidates": [{"content": {"parts": [{"text": "`+benchDelta(i)+`","thought": true}`+tail)
		}
		for i := 0; i < benchText; i++ {
			ev("", `{"candidates": [{"content": {"parts": [{"text": "`+benchDelta(i)+`"}`+tail)
		}
		ev("", `{"candidates": [{"content": {"parts": [{"functionCall": {"name": "read_file","args": {"path": "segment1segment2"}},"thoughtSignature": "CiQB0e2K"}],"role": "model"},"finishReason": "STOP","index": 0}],"usageMetadata": {"promptTokenCount": 5900,"candidatesTokenCount": 3500,"thoughtsTokenCount": 700,"totalTokenCount": 10100},"modelVersion": "gemini","responseId": "bench"}`)
	}
	return []byte(b.String())
}
