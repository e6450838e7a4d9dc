// Package yamlnode reads yaml.v3 node trees the lenient way: follow
// aliases, list a mapping's entries in file order with merge keys expanded,
// look a key up, read a scalar's text. Keeping the nodes (rather than
// decoding into structs) keeps key order and line numbers, which the
// importer needs for its notes and `ccload tokens new` needs to splice text
// into a file without re-encoding it.
//
// The config decoder walks nodes too but reports every oddity as a Problem
// (duplicate keys, bad merges, alias bombs); these helpers report nothing
// and skip what does not fit.
package yamlnode

import (
	"strings"

	"gopkg.in/yaml.v3"
)

// Entry is one key and value of a mapping.
type Entry struct {
	Key string
	Val *yaml.Node
}

// Resolve follows an alias to the node it names.
func Resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// Pairs lists a mapping's entries in order, with merge keys (<<: *base)
// expanded; keys written in n win. Anything but a mapping has none.
func Pairs(n *yaml.Node) []Entry {
	n = Resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	var out, merged []Entry
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Value == "<<" && k.Tag == "!!merge" {
			v = Resolve(v)
			if v != nil && v.Kind == yaml.SequenceNode {
				for _, m := range v.Content {
					merged = append(merged, Pairs(m)...)
				}
			} else {
				merged = append(merged, Pairs(v)...)
			}
			continue
		}
		out = append(out, Entry{k.Value, v})
	}
	for _, m := range merged {
		if Get(out, m.Key) == nil {
			out = append(out, m)
		}
	}
	return out
}

// Get returns the value of key among es, aliases followed, or nil.
func Get(es []Entry, key string) *yaml.Node {
	for _, e := range es {
		if e.Key == key {
			return Resolve(e.Val)
		}
	}
	return nil
}

// Find returns the value of key written in mapping m itself (no aliases
// followed, no merge keys) and the index of the key node in m.Content, or
// nil and -1. It is for editing: the index says where the key sits.
func Find(m *yaml.Node, key string) (*yaml.Node, int) {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, -1
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1], i
		}
	}
	return nil, -1
}

// Text returns a scalar's text, trimmed ("" for null and non-scalars).
func Text(n *yaml.Node) string {
	n = Resolve(n)
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return ""
	}
	return strings.TrimSpace(n.Value)
}
