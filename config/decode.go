package config

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/ccload/ccload/config/yamlnode"
)

// The decoder walks a yaml.Node tree by hand, so every problem keeps its
// line and column, and collects problems instead of stopping at the first.
// Each mapping is described by a table of fields (see sections.go); the same
// tables give the accepted keys to KnownKeys and so to the schema test.
//
// Conventions shared by every field:
//   - null (`key:` with no value) means "not set": the default stays.
//   - string scalars are expanded (${VAR}, ${file:...}, $$) before use; keys
//     never are.
//   - a typed field (integer, number, boolean) takes a scalar of that YAML
//     type, or a string whose expansion parses as that type, so
//     `priority: ${PRIO:-10}` works while `priority: "10"` does not.

// maxAliases bounds alias resolutions, so a "billion laughs" document
// cannot make the walk exponential.
const maxAliases = 10000

type decoder struct {
	file    string
	x       expander
	probs   Problems
	aliases int
	refs    []channelRef // token channel names, checked once every channel is known
	// oauthNodes are the `oauth:` values, where a missing
	// server.secret_key is reported.
	oauthNodes map[*Channel]*yaml.Node
}

// addf records a problem at n, prefixed by the dotted path of the value.
func (d *decoder) addf(n *yaml.Node, path, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if path != "" {
		msg = path + ": " + msg
	}
	p := Problem{File: d.file, Msg: msg}
	if n != nil {
		p.Line, p.Col = n.Line, n.Column
	}
	d.probs = append(d.probs, p)
}

// resolve follows aliases; it returns nil once the alias budget is spent.
func (d *decoder) resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		d.aliases++
		if d.aliases == maxAliases {
			d.addf(n, "", "too many alias expansions (more than %d)", maxAliases)
		}
		if d.aliases >= maxAliases {
			return nil
		}
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

// describe names what a node is, for "want X, got Y" messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.DocumentNode:
		return "document"
	}
	switch n.Tag {
	case "!!str", "!!timestamp", "!!binary":
		return quoteShort(n.Value)
	case "!!null":
		return "null"
	}
	return n.Value
}

func quoteShort(s string) string {
	if utf8.RuneCountInString(s) > 40 {
		s = string([]rune(s)[:40]) + "…"
	}
	return strconv.Quote(s)
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// scalar is one scalar value after expansion.
type scalar struct {
	node     *yaml.Node
	text     string // expanded value
	expanded bool   // the text came out of ${...} or $$
}

// scalar returns n's value, expanded when it is a string. ok is false, with
// no problem recorded, for null; and false with a problem when n is not a
// scalar or the expansion failed.
func (d *decoder) scalar(n *yaml.Node, path, want string) (scalar, bool) {
	n = d.resolve(n)
	if isNull(n) {
		return scalar{}, false
	}
	if n.Kind != yaml.ScalarNode {
		d.addf(n, path, "want %s, got %s", want, describe(n))
		return scalar{}, false
	}
	s := scalar{node: n, text: n.Value}
	if n.Tag == "!!str" && strings.Contains(n.Value, "$") {
		v, err := d.x.expand(n.Value)
		if err != nil {
			d.addf(n, path, "%v", err)
			return scalar{}, false
		}
		s.text, s.expanded = v, v != n.Value
	}
	return s, true
}

// str reads a string. Numbers and timestamps are taken as written
// (`name: 2024` is "2024"); booleans are refused because `true` for a name
// or URL is almost certainly a mistake.
func (d *decoder) str(n *yaml.Node, path string) (string, bool) {
	s, ok := d.scalar(n, path, "string")
	if !ok {
		return "", false
	}
	if s.node.Tag == "!!bool" {
		d.addf(s.node, path, "want string, got %s (quote it)", s.text)
		return "", false
	}
	return s.text, true
}

func (d *decoder) integer(n *yaml.Node, path string) (int, bool) {
	s, ok := d.scalar(n, path, "integer")
	if !ok {
		return 0, false
	}
	if s.node.Tag == "!!int" || s.expanded {
		v, err := strconv.ParseInt(s.text, 0, 64)
		if err == nil && v >= math.MinInt32 && v <= math.MaxInt32 {
			return int(v), true
		}
		if err == nil || errors.Is(err, strconv.ErrRange) {
			d.addf(s.node, path, "integer %s is out of range", s.text)
			return 0, false
		}
	}
	d.addf(s.node, path, "want integer, got %s", got(s))
	return 0, false
}

func (d *decoder) number(n *yaml.Node, path string) (float64, bool) {
	s, ok := d.scalar(n, path, "number")
	if !ok {
		return 0, false
	}
	if s.node.Tag == "!!int" || s.node.Tag == "!!float" || s.expanded {
		v, err := strconv.ParseFloat(strings.ReplaceAll(s.text, "_", ""), 64)
		if err == nil && !math.IsInf(v, 0) && !math.IsNaN(v) {
			return v, true
		}
	}
	d.addf(s.node, path, "want number, got %s", got(s))
	return 0, false
}

func (d *decoder) boolean(n *yaml.Node, path string) (bool, bool) {
	s, ok := d.scalar(n, path, "boolean")
	if !ok {
		return false, false
	}
	if s.node.Tag == "!!bool" || s.expanded {
		switch s.text {
		case "true", "True", "TRUE":
			return true, true
		case "false", "False", "FALSE":
			return false, true
		}
	}
	d.addf(s.node, path, "want boolean (true or false), got %s", got(s))
	return false, false
}

func (d *decoder) duration(n *yaml.Node, path string) (Duration, bool) {
	s, ok := d.scalar(n, path, "duration")
	if !ok {
		return 0, false
	}
	v, err := ParseDuration(s.text)
	if err != nil {
		d.addf(s.node, path, `want duration like "90s", "5m", "1h30m" or "7d", got %s`, got(s))
		return 0, false
	}
	return v, true
}

func (d *decoder) size(n *yaml.Node, path string) (Size, bool) {
	s, ok := d.scalar(n, path, "size")
	if !ok {
		return 0, false
	}
	v, err := ParseSize(s.text)
	if err != nil {
		d.addf(s.node, path, `want size like "10MiB", "512KiB", "1MB" or bytes, got %s`, got(s))
		return 0, false
	}
	return v, true
}

// got shows a scalar in a message: the expanded text, quoted if the file
// had a string there.
func got(s scalar) string {
	if s.expanded || s.node.Tag == "!!str" || s.node.Tag == "!!timestamp" {
		return quoteShort(s.text)
	}
	return s.text
}

// seq calls fn for each item of a list, skipping (and reporting) empty
// items. It returns false, with a problem, when n is set but not a list.
func (d *decoder) seq(n *yaml.Node, path string, fn func(i int, item *yaml.Node, ipath string)) bool {
	n = d.resolve(n)
	if isNull(n) {
		return true
	}
	if n.Kind != yaml.SequenceNode {
		d.addf(n, path, "want list, got %s", describe(n))
		return false
	}
	for i, item := range n.Content {
		ip := index(path, i)
		if isNull(d.resolve(item)) {
			d.addf(item, ip, "empty list item")
			continue
		}
		fn(i, item, ip)
	}
	return true
}

// seqLen is the number of items when n is a list, else 0.
func (d *decoder) seqLen(n *yaml.Node) int {
	if n = d.resolve(n); n != nil && n.Kind == yaml.SequenceNode {
		return len(n.Content)
	}
	return 0
}

// pair is one key and value of a mapping.
type pair struct{ key, val *yaml.Node }

// pairs lists the entries of mapping n in file order, with merge keys
// (`<<: *base`) expanded: keys written in n win over merged ones, and an
// earlier merged mapping wins over a later one, as YAML specifies. A key
// written twice is a problem.
func (d *decoder) pairs(n *yaml.Node, path string) []pair {
	var out, merged []pair
	first := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := d.resolve(n.Content[i]), n.Content[i+1]
		if k == nil {
			continue
		}
		if k.Kind != yaml.ScalarNode {
			d.addf(k, path, "want a plain key, got %s", describe(k))
			continue
		}
		if k.Tag == "!!merge" {
			merged = append(merged, d.mergeSources(v, path)...)
			continue
		}
		if prev, dup := first[k.Value]; dup {
			d.addf(k, path, "duplicate key %q (first at line %d)", k.Value, prev.Line)
			continue
		}
		first[k.Value] = k
		out = append(out, pair{k, v})
	}
	for _, p := range merged {
		if _, ok := first[p.key.Value]; !ok {
			first[p.key.Value] = p.key
			out = append(out, p)
		}
	}
	return out
}

// mergeSources returns the pairs of the mapping(s) a merge key points at.
func (d *decoder) mergeSources(v *yaml.Node, path string) []pair {
	v = d.resolve(v)
	var srcs []*yaml.Node
	switch {
	case v == nil:
	case v.Kind == yaml.MappingNode:
		srcs = []*yaml.Node{v}
	case v.Kind == yaml.SequenceNode:
		for _, it := range v.Content {
			if it = d.resolve(it); it != nil && it.Kind == yaml.MappingNode {
				srcs = append(srcs, it)
			} else if it != nil {
				d.addf(it, path, "merge (<<) wants mappings, got %s", describe(it))
			}
		}
	default:
		d.addf(v, path, "merge (<<) wants a mapping, got %s", describe(v))
	}
	var out []pair
	for _, s := range srcs {
		out = append(out, d.pairs(s, path)...)
	}
	return out
}

// field is one key of a mapping that decodes into a T.
type field[T any] struct {
	key string
	set func(d *decoder, n *yaml.Node, path string, v *T)
}

// fields is the table of every key a mapping accepts. The decoder rejects
// any other key, and KnownKeys exports the keys, so the table is the single
// list of what the file may say.
type fields[T any] []field[T]

func (fs fields[T]) keys() []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.key
	}
	return out
}

// decode walks mapping n into v. It returns the value node of every key
// present, for checks that need positions, or nil when n is null or not a
// mapping (the latter is reported).
func (fs fields[T]) decode(d *decoder, n *yaml.Node, path string, v *T) map[string]*yaml.Node {
	n = d.resolve(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		d.addf(n, path, "want mapping, got %s", describe(n))
		return nil
	}
	seen := map[string]*yaml.Node{}
	for _, p := range d.pairs(n, path) {
		i := slices.IndexFunc(fs, func(f field[T]) bool { return f.key == p.key.Value })
		if i < 0 {
			d.addf(p.key, path, "unknown field %q%s", p.key.Value, suggest(p.key.Value, fs.keys()))
			continue
		}
		seen[p.key.Value] = p.val
		fs[i].set(d, p.val, join(path, p.key.Value), v)
	}
	return seen
}

// child returns the value of key in mapping n, or nil.
func (d *decoder) child(n *yaml.Node, key string) *yaml.Node {
	v, _ := yamlnode.Find(d.resolve(n), key)
	return v
}

// suggest returns ` (did you mean "x"?)` for the closest known key, or the
// list of known keys when none is close.
func suggest(key string, known []string) string {
	if c, ok := closest(key, known); ok {
		return fmt.Sprintf(" (did you mean %q?)", c)
	}
	return " (want one of: " + strings.Join(known, ", ") + ")"
}

// closest returns the entry of known nearest to key by edit distance, if
// it is near enough to be a likely typo: at most 3 edits and at most half
// the length of key.
func closest(key string, known []string) (string, bool) {
	best, bestDist := "", math.MaxInt
	for _, k := range known {
		if dist := editDistance(key, k); dist < bestDist {
			best, bestDist = k, dist
		}
	}
	return best, best != "" && bestDist <= max(1, min(3, len(key)/2))
}

// editDistance is the Levenshtein distance between a and b, by runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
