package request

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ccload/ccload/protocol"
)

// realFamily maps a recorded body (../testdata/real, written by make
// test-clients) to the family its client speaks.
func realFamily(name string) protocol.Family {
	switch {
	case strings.HasPrefix(name, "claude-code"):
		return protocol.Anthropic
	case strings.HasPrefix(name, "codex"):
		return protocol.Responses
	case strings.HasPrefix(name, "gemini-cli"):
		return protocol.Gemini
	}
	return ""
}

// strictToolName is the rule every target accepts (toolname.go).
var strictToolName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$`)

// TestRealClientBodies converts every body the real CLIs sent (Claude Code,
// Codex in both modes, Gemini CLI) to each other family: each must convert,
// with tool names every target accepts, and the conversion notes must be
// those in ../testdata/real/notes.golden (-update rewrites it). The bodies are
// too large to keep whole outputs as goldens; the request goldens
// in testdata hold the same shapes in small.
func TestRealClientBodies(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "real", "*.json"))
	if len(files) == 0 {
		t.Fatal("no recorded bodies in testdata/real")
	}
	sort.Strings(files)
	var got bytes.Buffer
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		from := realFamily(name)
		if from == "" {
			t.Fatalf("%s: unknown client", name)
		}
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		model := gjson.GetBytes(body, "model").Str
		for _, to := range protocol.Families {
			if to == from {
				continue
			}
			out, notes, err := ConvertWith(from, to, body, "upstream-model", true, Options{})
			if err != nil {
				t.Errorf("%s -> %s: %v", name, to, err)
				continue
			}
			if !gjson.ValidBytes(out) {
				t.Errorf("%s -> %s: output is not JSON", name, to)
			}
			for _, n := range realToolNames(to, out) {
				if !strictToolName.MatchString(n) {
					t.Errorf("%s -> %s: tool name %q breaks the name rules", name, to, n)
				}
			}
			fmt.Fprintf(&got, "%s (%s) -> %s:\n", name, model, to)
			for _, n := range notes {
				fmt.Fprintf(&got, "\t%s\n", n)
			}
		}
	}
	golden := filepath.Join("..", "testdata", "real", "notes.golden")
	if updateGolden() {
		if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("notes differ\n--- got\n%s\n--- want\n%s", got.Bytes(), want)
	}
}

// realToolNames lists the function names a converted request offers.
func realToolNames(to protocol.Family, out []byte) []string {
	var names []string
	path := map[protocol.Family]string{
		protocol.Anthropic: "tools.#.name",
		protocol.OpenAI:    "tools.#.function.name",
		protocol.Responses: "tools.#.name",
		protocol.Gemini:    "tools.#.functionDeclarations.#.name",
	}[to]
	gjson.GetBytes(out, path).ForEach(func(_, v gjson.Result) bool {
		if v.IsArray() {
			v.ForEach(func(_, n gjson.Result) bool { names = append(names, n.Str); return true })
		} else if v.Str != "" {
			names = append(names, v.Str)
		}
		return true
	})
	return names
}
