package request

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ccload/ccload/protocol"
	"github.com/ccload/ccload/protocol/signature"
)

// The -update flag rewrites the want sections. Other golden tests of this
// package may define the same flag: it is defined once and looked up.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the want sections of golden files")
	}
}

func updateGolden() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// A request golden file holds one input and one want per other family:
//
//	model: gemini-2.5-pro     (optional header lines; default model "upstream-model")
//	stream: true
//	-- in.anthropic.json --
//	-- want.openai.json --    (or want.openai.err: the expected error text)
//	-- want.openai.notes --   (the conversion notes, one a line; absent: none)
//
// The header "hosted_search: true" converts with Options.HostedSearch.
// JSON is compared after canonicalisation (key order and spacing ignored).
type reqCase struct {
	name   string
	path   string
	header []string
	from   protocol.Family
	in     []byte
	model  string
	stream bool
	opt    Options // header "hosted_search: true"
	// channel (header "channel: name") is the upstream channel each target
	// is sent to: signatures it minted (tagged with it) go back to it.
	channel string
	wants   map[string][]byte // section name -> content
}

func TestRequestTables(t *testing.T) {
	for _, f := range protocol.Families {
		if requestDecoders[f] == nil || requestEncoders[f] == nil {
			t.Errorf("family %s: decoder or encoder missing", f)
		}
		if _, ok := capsOf[f]; !ok {
			t.Errorf("family %s: no capability row", f)
		}
	}
	if len(requestDecoders) != len(protocol.Families) || len(requestEncoders) != len(protocol.Families) {
		t.Errorf("tables hold %d decoders and %d encoders, want %d", len(requestDecoders), len(requestEncoders), len(protocol.Families))
	}
}

func TestRequestGolden(t *testing.T) {
	cases := loadReqCases(t)
	if len(cases) == 0 {
		t.Fatal("no golden files in testdata")
	}
	paths := make(map[string]int)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, to := range protocol.Families {
				if to == c.from {
					continue
				}
				paths[string(c.from)+"-"+string(to)]++
				if c.channel != "" {
					c.opt.Origin = signature.NewOrigin(to, c.channel)
				}
				out, notes, err := ConvertWith(c.from, to, c.in, c.model, c.stream, c.opt)
				if updateGolden() {
					delete(c.wants, "want."+string(to)+".json")
					delete(c.wants, "want."+string(to)+".err")
					delete(c.wants, "want."+string(to)+".notes")
					if len(notes) > 0 {
						c.wants["want."+string(to)+".notes"] = []byte(strings.Join(notes, "\n") + "\n")
					}
					if err != nil {
						c.wants["want."+string(to)+".err"] = []byte(err.Error() + "\n")
					} else {
						c.wants["want."+string(to)+".json"] = indentJSON(t, out)
					}
					continue
				}
				t.Run(string(c.from)+"-"+string(to), func(t *testing.T) {
					checkReqWant(t, c, to, out, err)
					want := strings.TrimSpace(string(c.wants["want."+string(to)+".notes"]))
					if got := strings.Join(notes, "\n"); err == nil && got != want {
						t.Errorf("notes\n got: %s\nwant: %s", got, want)
					}
					// The engine's admission checks the body first and says so
					// (Checked): the conversion must come out the same.
					if validObject(c.in) {
						opt := c.opt
						opt.Checked = true
						out2, notes2, err2 := ConvertWith(c.from, to, c.in, c.model, c.stream, opt)
						if string(out2) != string(out) || strings.Join(notes2, "\n") != strings.Join(notes, "\n") || fmt.Sprint(err2) != fmt.Sprint(err) {
							t.Errorf("Checked changed the conversion:\n%s %q %v\nagainst\n%s %q %v", out2, notes2, err2, out, notes, err)
						}
					}
				})
			}
			if updateGolden() {
				writeReqCase(t, c)
			}
		})
	}
	for _, from := range protocol.Families {
		for _, to := range protocol.Families {
			if from != to && paths[string(from)+"-"+string(to)] == 0 {
				t.Errorf("no golden case covers %s -> %s", from, to)
			}
		}
	}
}

func checkReqWant(t *testing.T, c *reqCase, to protocol.Family, out []byte, err error) {
	if want, ok := c.wants["want."+string(to)+".err"]; ok {
		if err == nil {
			t.Fatalf("want error %q, got body\n%s", strings.TrimSpace(string(want)), indentJSON(t, out))
		}
		if !errors.Is(err, ErrUnrepresentable) {
			t.Errorf("error %q does not wrap ErrUnrepresentable", err)
		}
		if got := err.Error(); got != strings.TrimSpace(string(want)) {
			t.Errorf("error\n got: %s\nwant: %s", got, strings.TrimSpace(string(want)))
		}
		return
	}
	want, ok := c.wants["want."+string(to)+".json"]
	if !ok {
		t.Fatalf("%s: no want.%s section (run with -update)", c.path, to)
	}
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	g, w := canonJSON(t, out), canonJSON(t, want)
	if g != w {
		t.Errorf("body mismatch (canonical form)\n--- got\n%s\n--- want\n%s", g, w)
	}
}

func loadReqCases(t testing.TB) []*reqCase {
	files, err := filepath.Glob(filepath.Join("testdata", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	var cases []*reqCase
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		c := &reqCase{name: strings.TrimSuffix(filepath.Base(f), ".txtar"), path: f, model: "upstream-model", wants: map[string][]byte{}}
		header, sections := parseTxtar(data)
		c.header = header
		for _, h := range header {
			k, v, _ := strings.Cut(h, ":")
			switch strings.TrimSpace(k) {
			case "model":
				c.model = strings.TrimSpace(v)
			case "stream":
				c.stream = strings.TrimSpace(v) == "true"
			case "channel":
				c.channel = strings.TrimSpace(v)
			case "hosted_search":
				c.opt.HostedSearch = strings.TrimSpace(v) == "true"
			}
		}
		for _, s := range sections {
			if fam, ok := strings.CutPrefix(s.name, "in."); ok {
				if c.in != nil {
					t.Fatalf("%s: more than one input", f)
				}
				c.from = protocol.Family(strings.TrimSuffix(fam, ".json"))
				c.in = s.data
				continue
			}
			c.wants[s.name] = s.data
		}
		if c.in == nil {
			t.Fatalf("%s: no in.<family>.json section", f)
		}
		cases = append(cases, c)
	}
	return cases
}

type txtarSection struct {
	name string
	data []byte
}

// parseTxtar reads the txtar format: header lines, then "-- name --" lines
// each starting a section.
func parseTxtar(data []byte) (header []string, sections []txtarSection) {
	lines := strings.SplitAfter(string(data), "\n")
	cur := -1
	for _, l := range lines {
		trimmed := strings.TrimRight(l, "\r\n")
		if strings.HasPrefix(trimmed, "-- ") && strings.HasSuffix(trimmed, " --") && len(trimmed) > 6 {
			sections = append(sections, txtarSection{name: trimmed[3 : len(trimmed)-3]})
			cur = len(sections) - 1
			continue
		}
		if cur < 0 {
			if trimmed != "" {
				header = append(header, trimmed)
			}
			continue
		}
		sections[cur].data = append(sections[cur].data, l...)
	}
	return header, sections
}

func writeReqCase(t *testing.T, c *reqCase) {
	var b bytes.Buffer
	for _, h := range c.header {
		b.WriteString(h + "\n")
	}
	fmt.Fprintf(&b, "-- in.%s.json --\n", c.from)
	b.Write(c.in)
	for _, to := range protocol.Families {
		for _, ext := range []string{"json", "err", "notes"} {
			name := "want." + string(to) + "." + ext
			if d, ok := c.wants[name]; ok {
				fmt.Fprintf(&b, "-- %s --\n", name)
				b.Write(d)
			}
		}
	}
	if err := os.WriteFile(c.path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func indentJSON(t testing.TB, b []byte) []byte {
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, b)
	}
	out.WriteByte('\n')
	return out.Bytes()
}

// canonJSON re-marshals a document with sorted keys and exact numbers.
func canonJSON(t testing.TB, b []byte) string {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestRequestRoundTrip converts every golden input A -> B -> A and checks
// that the conversation (roles, text, tool calls with their arguments, tool
// results paired with the call they answer) and the tool set survive.
func TestRequestRoundTrip(t *testing.T) {
	for _, c := range loadReqCases(t) {
		for _, to := range protocol.Families {
			if to == c.from {
				continue
			}
			mid, err := Convert(c.from, to, c.in, c.model, c.stream)
			if err != nil {
				continue // refused paths have nothing to round-trip
			}
			back, err := Convert(to, c.from, mid, c.model, c.stream)
			if err != nil {
				t.Errorf("%s: %s -> %s -> back: %v", c.name, c.from, to, err)
				continue
			}
			want, got := reqSummary(t, c.from, c.in, to), reqSummary(t, c.from, back, to)
			if want != got {
				t.Errorf("%s: %s -> %s -> %s changed the request\n--- got\n%s\n--- want\n%s", c.name, c.from, to, c.from, got, want)
			}
		}
	}
}

// reqSummary renders what every path must keep. Documents are reduced to
// their kind: their form changes by design (a text document becomes text).
func reqSummary(t *testing.T, f protocol.Family, body []byte, via protocol.Family) string {
	var r Req
	if err := requestDecoders[f](&r, body, via); err != nil {
		t.Fatalf("decode %s: %v", f, err)
	}
	var b strings.Builder
	for _, s := range r.System {
		fmt.Fprintf(&b, "system: %q\n", s)
	}
	names := r.toolNames()
	for _, m := range r.Msgs {
		fmt.Fprintf(&b, "turn %d:\n", m.Role)
		for _, p := range m.Parts {
			switch p.Kind {
			case PartText:
				if p.Text != "" {
					fmt.Fprintf(&b, "  text %q\n", p.Text)
				}
			case PartImage:
				fmt.Fprintf(&b, "  image %s %d %s\n", p.MIME, len(p.Data), p.URL)
			case PartDocument:
				if p.Data == "" && p.URL == "" { // a text document travels as text
					fmt.Fprintf(&b, "  text %q\n", documentText(&p))
				} else {
					fmt.Fprintf(&b, "  document %s %d %s\n", p.MIME, len(p.Data), p.URL)
				}
			case PartToolCall:
				fmt.Fprintf(&b, "  call %s %s\n", p.Name, canonJSON(t, []byte(p.callArgs())))
			case PartToolResult:
				fmt.Fprintf(&b, "  result for %s:", names[p.ID])
				for _, c := range p.Content {
					fmt.Fprintf(&b, " %q", strings.TrimPrefix(c.Text, "Error: "))
				}
				b.WriteByte('\n')
			}
		}
	}
	// A custom tool reaches families without them as its function shape,
	// and comes back as that function: only the name is compared.
	for _, tl := range r.Tools {
		fmt.Fprintf(&b, "tool %s\n", tl.Name)
	}
	return b.String()
}

// Fuzz targets: no panic on hostile input, and whatever is produced is JSON.
func FuzzRequest_anthropic(f *testing.F) { fuzzRequest(f, protocol.Anthropic) }
func FuzzRequest_openai(f *testing.F)    { fuzzRequest(f, protocol.OpenAI) }
func FuzzRequest_responses(f *testing.F) { fuzzRequest(f, protocol.Responses) }
func FuzzRequest_gemini(f *testing.F)    { fuzzRequest(f, protocol.Gemini) }

func fuzzRequest(f *testing.F, from protocol.Family) {
	for _, c := range loadReqCases(f) {
		if c.from == from {
			f.Add(c.in)
		}
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"messages":[{"role":"user","content":[{"type":"tool_result"}]}]}`))
	f.Add([]byte(`{"contents":[{"role":"user","parts":[{"functionResponse":{"name":"x"}}]}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, to := range protocol.Families {
			if to == from {
				continue
			}
			out, err := Convert(from, to, body, "gemini-3-pro", true)
			if err != nil {
				continue
			}
			if !json.Valid(out) {
				t.Fatalf("%s -> %s produced invalid JSON from %q:\n%s", from, to, body, out)
			}
		}
	})
}

// BenchmarkRequest converts a Claude Code sized request (24 tools, about
// 64 KB, multi-turn with tool calls) along every path. The inputs of the
// other families are that request converted from Anthropic.
func BenchmarkRequest(b *testing.B) {
	bodies := map[protocol.Family][]byte{protocol.Anthropic: benchAnthropicBody()}
	for _, f := range protocol.Families {
		if f == protocol.Anthropic {
			continue
		}
		out, err := Convert(protocol.Anthropic, f, bodies[protocol.Anthropic], "bench-model", true)
		if err != nil {
			b.Fatalf("building the %s body: %v", f, err)
		}
		bodies[f] = out
	}
	for _, from := range protocol.Families {
		for _, to := range protocol.Families {
			if from == to {
				continue
			}
			body := bodies[from]
			b.Run(string(from)+"-"+string(to), func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := Convert(from, to, body, "bench-model", true); err != nil {
						b.Fatal(err)
					}
				}
			})
			// As the gateway converts: its admission has checked the body.
			b.Run(string(from)+"-"+string(to)+"-checked", func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				for b.Loop() {
					if _, _, err := ConvertWith(from, to, body, "bench-model", true, Options{Checked: true}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// benchAnthropicBody builds a request shaped like Claude Code's: a system
// prompt in cached blocks, 24 tools with real-looking schemas, adaptive
// thinking, and a conversation with text, thinking, tool calls and results.
func benchAnthropicBody() []byte {
	var b strings.Builder
	para := strings.Repeat("You are an interactive CLI tool that helps users with software engineering tasks. ", 12)
	b.WriteString(`{"model":"claude-opus-4-8","max_tokens":64000,"stream":true,"metadata":{"user_id":"user_abc_session_1"},`)
	b.WriteString(`"thinking":{"type":"adaptive"},"output_config":{"effort":"high"},`)
	b.WriteString(`"context_management":{"edits":[{"type":"clear_thinking_20251015","keep":"all"}]},`)
	fmt.Fprintf(&b, `"system":[{"type":"text","text":%q},{"type":"text","text":%q,"cache_control":{"type":"ephemeral"}}],`, "x-anthropic-billing-header: cc_version=2.1", strings.Repeat(para, 6))
	b.WriteString(`"tools":[`)
	for i := 0; i < 24; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"Tool%d","description":%q,"input_schema":{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","additionalProperties":false,"required":["command"],"properties":{"command":{"type":"string","description":%q},"timeout":{"type":"number","exclusiveMinimum":0,"description":"Optional timeout in milliseconds"},"mode":{"type":"string","enum":["a","b","c"]},"paths":{"type":"array","items":{"type":"string"}}}}}`,
			i, strings.Repeat("Executes a given command with optional timeout, ensuring proper handling and security measures. ", 12), strings.Repeat("The command to execute. ", 8))
	}
	b.WriteString(`],"messages":[`)
	for turn := 0; turn < 8; turn++ {
		if turn > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"role":"user","content":[{"type":"text","text":%q,"cache_control":{"type":"ephemeral"}}]},`, strings.Repeat("Please look at the failing test and fix it. ", 10))
		fmt.Fprintf(&b, `{"role":"assistant","content":[{"type":"thinking","thinking":%q,"signature":"c2lnbmF0dXJlLWJ5dGVzLWhlcmU="},{"type":"text","text":"Let me check."},{"type":"tool_use","id":"toolu_%02d_a","name":"Tool1","input":{"command":"go test ./...","timeout":120000}},{"type":"tool_use","id":"toolu_%02d_b","name":"Tool2","input":{"command":"git status"}}]},`, strings.Repeat("I should run the tests first. ", 10), turn, turn)
		fmt.Fprintf(&b, `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%02d_a","content":%q},{"type":"tool_result","tool_use_id":"toolu_%02d_b","content":"On branch main"}]}`, turn, strings.Repeat("--- FAIL: TestSomething (0.00s)\n", 20), turn)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

func TestBenchBodyIsRealistic(t *testing.T) {
	body := benchAnthropicBody()
	if !json.Valid(body) {
		t.Fatal("bench body is not JSON")
	}
	if n := len(body); n < 48<<10 || n > 96<<10 {
		t.Errorf("bench body is %d bytes, want about 64 KB", n)
	}
	var v struct{ Tools []json.RawMessage }
	if err := json.Unmarshal(body, &v); err != nil || len(v.Tools) != 24 {
		t.Errorf("bench body has %d tools (err %v), want 24", len(v.Tools), err)
	}
}
