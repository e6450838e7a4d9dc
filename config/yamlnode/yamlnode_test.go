package yamlnode

import (
	"testing"

	"gopkg.in/yaml.v3"
)

func parse(t *testing.T, src string) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Content[0]
}

func TestPairsExpandsMergeKeysInOrder(t *testing.T) {
	root := parse(t, `
base: &base {a: 1, b: 2}
more: &more {c: 3}
m:
  <<: [*base, *more]
  b: written
  z: last
`)
	m := Get(Pairs(root), "m")
	var keys, vals []string
	for _, e := range Pairs(m) {
		keys = append(keys, e.Key)
		vals = append(vals, Text(e.Val))
	}
	want := "b=written z=last a=1 c=3"
	got := ""
	for i := range keys {
		if i > 0 {
			got += " "
		}
		got += keys[i] + "=" + vals[i]
	}
	if got != want {
		t.Fatalf("Pairs = %q, want %q", got, want)
	}
}

func TestGetFollowsAliasesAndTextReadsScalars(t *testing.T) {
	root := parse(t, "a: &x '  hi  '\nb: *x\nc: ~\nd: [1]\n")
	es := Pairs(root)
	for key, want := range map[string]string{"a": "hi", "b": "hi", "c": "", "d": "", "missing": ""} {
		if got := Text(Get(es, key)); got != want {
			t.Errorf("Text(Get(%q)) = %q, want %q", key, got, want)
		}
	}
}

func TestFindReturnsKeyIndex(t *testing.T) {
	root := parse(t, "a: 1\ntokens: []\n")
	v, i := Find(root, "tokens")
	if v == nil || i != 2 || v.Kind != yaml.SequenceNode {
		t.Fatalf("Find(tokens) = %v, %d", v, i)
	}
	if v, i := Find(root, "nope"); v != nil || i != -1 {
		t.Fatalf("Find(nope) = %v, %d", v, i)
	}
	if v, i := Find(Get(Pairs(root), "a"), "x"); v != nil || i != -1 {
		t.Fatalf("Find on a scalar = %v, %d", v, i)
	}
}
