package importer

import (
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ccload/ccload/config/yamlnode"
)

// Helpers for reading a LiteLLM file as yaml.Node (config/yamlnode has the
// generic ones), which keeps key order so notes come out in the order the
// file has them.

// number returns a scalar as a float.
func number(n *yaml.Node) (float64, bool) {
	s := yamlnode.Text(n)
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
	n = yamlnode.Resolve(n)
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
		for _, e := range yamlnode.Pairs(n) {
			if secretish(e.Key) {
				parts = append(parts, e.Key+": (hidden)")
				continue
			}
			parts = append(parts, e.Key+": "+flow(e.Val))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return ""
}
