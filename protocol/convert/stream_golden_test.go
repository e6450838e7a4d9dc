package convert

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ccload/ccload/protocol"
	"github.com/ccload/ccload/protocol/signature"
)

// The golden files: testdata/stream/<from>-<to>/<case>.txtar hold
// "-- in.sse --" (the upstream stream) and "-- want.sse --" (what the client
// gets), plus "-- error --" when the conversion ends with a *StreamError;
// testdata/response/<from>-<to>/<case>.txtar hold "-- in.json --" and
// "-- want.json --" (or "-- error --"). The shared upstream corpus,
// testdata/corpus/<family>/<case>.sse and .json, is converted along every
// path: -update writes (or rewrites) the goldens of every corpus fixture for
// the three other families, and of every existing golden.

func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the golden files from the current output")
	}
}

// goldenUpdate reports whether -update was given (the flag is shared with
// the request goldens of this package).
func goldenUpdate() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// testClock fixes the time and the ids the encoders make up, so goldens are
// stable. Upstream ids and times win where the upstream gives them.
type testClock struct{}

func (testClock) now() int64 { return 1767225600 } // 2026-01-01T00:00:00Z
func (testClock) id() string { return "gen0001" }

const testModel = "client-model"

// runStream converts in as the engine does: events from protocol.Reader into
// Event, then Close at EOF. It returns the client's bytes and the last error.
func runStream(t testing.TB, from, to protocol.Family, in []byte, opt StreamOptions) ([]byte, error) {
	t.Helper()
	s := newStream(from, to, testModel, opt, testClock{})
	var out []byte
	emit := func(b []byte) { out = append(out, b...) }
	r := protocol.NewReader(bytes.NewReader(in), 0)
	var last error
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("reading fixture: %v", err)
		}
		if err := s.Event(ev, emit); err != nil {
			last = err
			break
		}
	}
	if last == nil {
		last = s.Close(emit)
	}
	return out, last
}

func TestStreamGolden(t *testing.T) {
	if goldenUpdate() {
		writeCorpusGoldens(t, "stream", ".sse")
	}
	for _, path := range goldenFiles(t, "stream") {
		t.Run(goldenName(path), func(t *testing.T) {
			from, to := goldenPair(t, path)
			ar := readArchive(t, path)
			got, err := runStream(t, from, to, ar.get(t, "in.sse"), StreamOptions{Request: ar.opt("request.json"), Origin: goldenOrigin(from)})
			if goldenUpdate() {
				ar.set("want.sse", got)
				ar.set("error", errText(err))
				writeArchive(t, path, ar)
				return
			}
			if want := ar.opt("error"); errText(err) == nil && len(want) > 0 || err != nil && string(errText(err)) != string(want) {
				t.Errorf("error = %v, want %q", err, want)
			}
			compareSSE(t, got, ar.get(t, "want.sse"))
			checkGrammar(t, to, got)
		})
	}
}

// compareSSE compares two SSE streams event by event: names exactly, data
// as canonical JSON (key order and spacing do not matter, everything else
// does), non-JSON data exactly.
func compareSSE(t *testing.T, got, want []byte) {
	t.Helper()
	g, w := sseEvents(t, got), sseEvents(t, want)
	for i := 0; i < max(len(g), len(w)); i++ {
		if i >= len(g) || i >= len(w) {
			t.Fatalf("got %d events, want %d; first missing or extra at %d\n--- got ---\n%s", len(g), len(w), i, got)
		}
		if g[i] != w[i] {
			t.Fatalf("event %d differs\n got: %s\nwant: %s\n--- got stream ---\n%s", i, g[i], w[i], got)
		}
	}
}

// sseEvents parses a stream into "name|canonical data" strings.
func sseEvents(t *testing.T, b []byte) []string {
	t.Helper()
	var out []string
	r := protocol.NewReader(bytes.NewReader(b), 0)
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("parsing SSE: %v", err)
		}
		data := string(ev.Data)
		if c, err := canonData(ev.Data); err == nil {
			data = c
		}
		out = append(out, string(ev.Name)+"|"+data)
	}
}

// canonData re-encodes JSON with sorted keys and exact numbers.
func canonData(b []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", err
	}
	if dec.More() {
		return "", errors.New("trailing data")
	}
	out, err := json.Marshal(v)
	return string(out), err
}

func errText(err error) []byte {
	if err == nil {
		return nil
	}
	return []byte(err.Error() + "\n")
}

// goldenFiles lists testdata/<kind>/*/*.txtar.
func goldenFiles(t *testing.T, kind string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", kind, "*", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	if len(files) == 0 {
		t.Fatalf("no golden files under testdata/%s", kind)
	}
	return files
}

func goldenName(path string) string {
	return filepath.Base(filepath.Dir(path)) + "/" + strings.TrimSuffix(filepath.Base(path), ".txtar")
}

func goldenPair(t *testing.T, path string) (from, to protocol.Family) {
	t.Helper()
	a, b, ok := strings.Cut(filepath.Base(filepath.Dir(path)), "-")
	f1, err1 := protocol.ParseFamily(a)
	f2, err2 := protocol.ParseFamily(b)
	if !ok || err1 != nil || err2 != nil || f1 != protocol.Family(a) || f2 != protocol.Family(b) {
		t.Fatalf("%s: directory must be <from>-<to> family names", path)
	}
	return f1, f2
}

// writeCorpusGoldens makes sure every corpus fixture has a golden for each
// of the three other families, copying the fixture in as the input.
func writeCorpusGoldens(t *testing.T, kind, ext string) {
	t.Helper()
	inName := "in" + ext
	for _, from := range protocol.Families {
		fixtures, _ := filepath.Glob(filepath.Join("testdata", "corpus", string(from), "*"+ext))
		for _, fx := range fixtures {
			in, err := os.ReadFile(fx)
			if err != nil {
				t.Fatal(err)
			}
			name := strings.TrimSuffix(filepath.Base(fx), ext)
			for _, to := range protocol.Families {
				if to == from {
					continue
				}
				path := filepath.Join("testdata", kind, string(from)+"-"+string(to), name+".txtar")
				ar := &archive{}
				if b, err := os.ReadFile(path); err == nil {
					ar = parseArchive(b)
				}
				ar.comment = []byte(fmt.Sprintf("Corpus fixture testdata/corpus/%s/%s%s converted for a %s client.\n", from, name, ext, to))
				ar.set(inName, in)
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				writeArchive(t, path, ar)
			}
		}
	}
}

// TestCorpusGoldensComplete checks that each corpus fixture is converted
// along all three of its paths and that the goldens still hold the fixture
// as it is now.
func TestCorpusGoldensComplete(t *testing.T) {
	for _, k := range []struct{ kind, ext string }{{"stream", ".sse"}, {"response", ".json"}} {
		for _, from := range protocol.Families {
			fixtures, _ := filepath.Glob(filepath.Join("testdata", "corpus", string(from), "*"+k.ext))
			if len(fixtures) == 0 {
				t.Errorf("no %s corpus fixtures for %s", k.kind, from)
			}
			for _, fx := range fixtures {
				in, _ := os.ReadFile(fx)
				name := strings.TrimSuffix(filepath.Base(fx), k.ext)
				for _, to := range protocol.Families {
					if to == from {
						continue
					}
					path := filepath.Join("testdata", k.kind, string(from)+"-"+string(to), name+".txtar")
					b, err := os.ReadFile(path)
					if err != nil {
						t.Errorf("%s: missing golden (run go test -update)", path)
						continue
					}
					if got := parseArchive(b).files["in"+k.ext]; !bytes.Equal(got, in) {
						t.Errorf("%s: input differs from %s (run go test -update)", path, fx)
					}
				}
			}
		}
	}
}

// archive is the txtar format of golang.org/x/tools/txtar: a comment, then
// files each introduced by a "-- name --" line.
type archive struct {
	comment []byte
	names   []string
	files   map[string][]byte
}

func parseArchive(data []byte) *archive {
	a := &archive{files: map[string][]byte{}}
	cur := "" // "" while in the comment
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i+1], data[i+1:]
		} else {
			data = nil
		}
		l := strings.TrimRight(string(line), "\r\n")
		if strings.HasPrefix(l, "-- ") && strings.HasSuffix(l, " --") && len(l) > 6 {
			cur = l[3 : len(l)-3]
			a.names = append(a.names, cur)
			a.files[cur] = []byte{}
			continue
		}
		if cur == "" {
			a.comment = append(a.comment, line...)
		} else {
			a.files[cur] = append(a.files[cur], line...)
		}
	}
	return a
}

func (a *archive) get(t testing.TB, name string) []byte {
	t.Helper()
	b, ok := a.files[name]
	if !ok {
		t.Fatalf("golden has no %q section", name)
	}
	return b
}

func (a *archive) opt(name string) []byte { return a.files[name] }

// set replaces a file; nil content removes it.
func (a *archive) set(name string, b []byte) {
	if a.files == nil {
		a.files = map[string][]byte{}
	}
	if b == nil {
		if _, ok := a.files[name]; ok {
			delete(a.files, name)
			for i, n := range a.names {
				if n == name {
					a.names = append(a.names[:i], a.names[i+1:]...)
					break
				}
			}
		}
		return
	}
	if _, ok := a.files[name]; !ok {
		a.names = append(a.names, name)
	}
	a.files[name] = b
}

func readArchive(t testing.TB, path string) *archive {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return parseArchive(b)
}

func writeArchive(t *testing.T, path string, a *archive) {
	t.Helper()
	var b bytes.Buffer
	b.Write(a.comment)
	for _, n := range a.names {
		fmt.Fprintf(&b, "-- %s --\n", n)
		f := a.files[n]
		b.Write(f)
		if len(f) > 0 && f[len(f)-1] != '\n' {
			b.WriteByte('\n')
		}
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// goldenOrigin is the upstream of the response and stream goldens: the
// signatures their clients are handed carry its tag.
func goldenOrigin(from protocol.Family) signature.Origin {
	return signature.NewOrigin(from, "golden")
}
