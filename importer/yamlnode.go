package importer

import (
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Helpers to read a LiteLLM file as yaml.Node, which keeps key order so
// notes come out in the order the file has them.

// entry is one key and value of a mapping.
type entry struct {
	key string
	val *yaml.Node
}

// resolve follows an alias.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// pairs lists a mapping's entries in order, with merge keys (<<: *base)
// expanded; keys written in n win. Anything but a mapping has none.
func pairs(n *yaml.Node) []entry {
	n = resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	var out, merged []entry
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Value == "<<" && k.Tag == "!!merge" {
			v = resolve(v)
			if v != nil && v.Kind == yaml.SequenceNode {
				for _, m := range v.Content {
					merged = append(merged, pairs(m)...)
				}
			} else {
				merged = append(merged, pairs(v)...)
			}
			continue
		}
		out = append(out, entry{k.Value, v})
	}
	for _, m := range merged {
		if get(out, m.key) == nil {
			out = append(out, m)
		}
	}
	return out
}

// get returns the value of key, or nil.
func get(es []entry, key string) *yaml.Node {
	for _, e := range es {
		if e.key == key {
			return resolve(e.val)
		}
	}
	return nil
}

// str returns a scalar's text ("" for null and non-scalars).
func str(n *yaml.Node) string {
	n = resolve(n)
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return ""
	}
	return strings.TrimSpace(n.Value)
}

// number returns a scalar as a float.
func number(n *yaml.Node) (float64, bool) {
	s := str(n)
	if s == "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}

// flow renders a node on one line for a comment: scalars as they are,
// lists and mappings in flow style, with the values of keys that look like
// credentials hidden.
func flow(n *yaml.Node) string {
	n = resolve(n)
	if n == nil {
		return ""
	}
	switch n.Kind {
	case yaml.ScalarNode:
		return n.Value
	case yaml.SequenceNode:
		parts := make([]string, len(n.Content))
		for i, c := range n.Content {
			parts[i] = flow(c)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case yaml.MappingNode:
		var parts []string
		for _, e := range pairs(n) {
			if secretish(e.key) {
				parts = append(parts, e.key+": (hidden)")
				continue
			}
			parts = append(parts, e.key+": "+flow(e.val))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return ""
}
