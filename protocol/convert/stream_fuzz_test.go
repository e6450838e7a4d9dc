package convert

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ccload/ccload/protocol"
)

// The fuzz targets feed arbitrary SSE to one decoder and every encoder. The
// converters must not panic, must emit only well-formed SSE whose data is
// JSON (or [DONE]), and must keep their output proportional to the input:
// a hostile upstream cannot make ccload buffer or write without bound.

func FuzzStream_anthropic(f *testing.F) { fuzzStream(f, protocol.Anthropic) }
func FuzzStream_openai(f *testing.F)    { fuzzStream(f, protocol.OpenAI) }
func FuzzStream_responses(f *testing.F) { fuzzStream(f, protocol.Responses) }
func FuzzStream_gemini(f *testing.F)    { fuzzStream(f, protocol.Gemini) }

// fuzzMaxEvent bounds one upstream event, as the engine's reader does.
const fuzzMaxEvent = 64 << 10

func fuzzStream(f *testing.F, from protocol.Family) {
	files, _ := filepath.Glob(filepath.Join("testdata", "corpus", string(from), "*.sse"))
	for _, fx := range files {
		b, err := os.ReadFile(fx)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)/2]) // cut mid-stream
	}
	f.Add([]byte("data: {\"type\":\"content_block_delta\",\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\\u00\"}}\n\n"))
	f.Add([]byte("data: {}\n\ndata: [DONE]\n\ndata: {\"error\":null}\n\n"))
	// The goldens of calls to a Codex client's custom and namespaced tools.
	goldens, _ := filepath.Glob(filepath.Join("testdata", "stream", string(from)+"-responses", "codex_*.txtar"))
	for _, g := range goldens {
		ar := readArchive(f, g)
		f.Add(ar.get(f, "in.sse"))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, to := range protocol.Families {
			if to == from {
				continue
			}
			var opt StreamOptions
			if to == protocol.Responses {
				opt.Request = fuzzCodexRequest // calls to its tools take the custom path
			}
			s := newStream(from, to, "m", opt, testClock{})
			var out []byte
			emit := func(b []byte) { out = append(out, b...) }
			r := protocol.NewReader(bytes.NewReader(in), fuzzMaxEvent)
			for {
				ev, err := r.Next()
				if err != nil {
					break
				}
				if s.Event(ev, emit) != nil {
					break
				}
			}
			_ = s.Close(emit)
			// Every item can repeat its text a few times (done events, the
			// final response object); per event there is a bounded overhead.
			if limit := 16<<10 + 64*len(in); len(out) > limit {
				t.Fatalf("%s-%s: %d bytes out for %d in", from, to, len(out), len(in))
			}
			checkSSEOutput(t, to, out)
		}
	})
}

// fuzzCodexRequest offers, as a Codex client would, custom and namespaced
// tools under the names the corpus and the goldens call (get_weather,
// functions__exec, crm__find).
var fuzzCodexRequest = []byte(`{"tools":[{"type":"custom","name":"get_weather"}],"input":[{"type":"additional_tools","tools":[
{"type":"namespace","name":"functions","tools":[{"type":"custom","name":"exec"}]},
{"type":"namespace","name":"crm","tools":[{"type":"function","name":"find"}]}]}]}`)

// checkSSEOutput checks that every block is "event: x\ndata: <json>\n\n" or
// "data: <json or [DONE]>\n\n".
func checkSSEOutput(t *testing.T, to protocol.Family, out []byte) {
	for len(out) > 0 {
		end := bytes.Index(out, []byte("\n\n"))
		if end < 0 {
			t.Fatalf("%s: unterminated block %q", to, out)
		}
		block := out[:end]
		out = out[end+2:]
		if bytes.HasPrefix(block, []byte("event: ")) {
			nl := bytes.IndexByte(block, '\n')
			if nl < 0 {
				t.Fatalf("%s: event without data %q", to, block)
			}
			block = block[nl+1:]
		}
		data, ok := bytes.CutPrefix(block, []byte("data: "))
		if !ok || bytes.IndexByte(data, '\n') >= 0 {
			t.Fatalf("%s: bad block %q", to, block)
		}
		if string(data) != "[DONE]" && !gjson.ValidBytes(data) {
			t.Fatalf("%s: data is not JSON: %q", to, data)
		}
	}
}
