package docscheck

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/ccload/ccload/schema"
)

var update = flag.Bool("update", false, "rewrite the generated key tables of docs/configuration.md from the schema")

const referenceFile = "../../docs/configuration.md"

// blockRe is one generated table: <!-- keys: SECTION --> ... <!-- /keys -->.
var blockRe = regexp.MustCompile(`(?s)<!-- keys: ([a-z_]+) -->\n(.*?)<!-- /keys -->`)

// TestConfigurationReferenceMatchesSchema: every top-level key of the
// schema has its table in docs/configuration.md, each table lists exactly
// the schema's keys with their types, defaults and descriptions, and no
// table is there for a key the schema lacks. With -update the tables are
// rewritten from the schema (the prose and examples around them are not).
func TestConfigurationReferenceMatchesSchema(t *testing.T) {
	keys, err := Keys(schema.JSON)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(referenceFile)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	sections := Sections(keys)
	seen := map[string]bool{}
	out := blockRe.ReplaceAllStringFunc(doc, func(block string) string {
		m := blockRe.FindStringSubmatch(block)
		section, got := m[1], m[2]
		seen[section] = true
		if !slices.Contains(sections, section) {
			t.Errorf("docs/configuration.md has a table for %q, a key the schema does not have", section)
			return block
		}
		want := Table(keys, section)
		if got != want && !*update {
			t.Errorf("docs/configuration.md, table %q differs from the schema (go test ./internal/docscheck -update rewrites it):\n%s", section, diffLines(got, want))
		}
		return "<!-- keys: " + section + " -->\n" + want + "<!-- /keys -->"
	})
	for _, s := range sections {
		if !seen[s] {
			t.Errorf("docs/configuration.md has no table for the schema's key %q: add <!-- keys: %s --> and <!-- /keys --> where it belongs, then run go test ./internal/docscheck -update", s, s)
		}
	}
	if *update && out != doc {
		if err := os.WriteFile(referenceFile, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestConfigurationExamplesUseSchemaKeys: every key that a YAML example of
// docs/configuration.md sets is a key of the schema, so an example cannot
// show a key that was renamed or never existed.
func TestConfigurationExamplesUseSchemaKeys(t *testing.T) {
	keys, err := Keys(schema.JSON)
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, k := range keys {
		known[k.Path] = true
	}
	raw, err := os.ReadFile(referenceFile)
	if err != nil {
		t.Fatal(err)
	}
	examples := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(raw), -1)
	if len(examples) == 0 {
		t.Fatal("docs/configuration.md has no yaml example")
	}
	for i, ex := range examples {
		var v any
		if err := yaml.Unmarshal([]byte(ex[1]), &v); err != nil {
			t.Errorf("example %d does not parse: %v\n%s", i+1, err, ex[1])
			continue
		}
		for _, p := range keyPaths(v, "") {
			if !known[p] {
				t.Errorf("example %d sets %s, which the schema does not have:\n%s", i+1, p, ex[1])
			}
		}
	}
}

// keyPaths lists the dotted key paths v sets, in the reference's notation:
// list items as [], the entries of the pricing mapping (model names) as *.
func keyPaths(v any, path string) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for k, sub := range v {
			p := k
			switch {
			case path == "pricing":
				p = path + ".*"
			case path != "":
				p = path + "." + k
			}
			out = append(out, p)
			out = append(out, keyPaths(sub, p)...)
		}
	case []any:
		for _, sub := range v {
			out = append(out, keyPaths(sub, path+"[]")...)
		}
	}
	return out
}

func diffLines(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	var b strings.Builder
	for _, l := range w {
		if !slices.Contains(g, l) {
			fmt.Fprintf(&b, "+ %s\n", l)
		}
	}
	for _, l := range g {
		if !slices.Contains(w, l) {
			fmt.Fprintf(&b, "- %s\n", l)
		}
	}
	return b.String()
}
