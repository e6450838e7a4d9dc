package docscheck

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// node is the part of a JSON Schema the reference reads.
type node struct {
	Ref         string           `json:"$ref"`
	Type        any              `json:"type"`
	Description string           `json:"description"`
	Enum        []any            `json:"enum"`
	Const       any              `json:"const"`
	Properties  map[string]*node `json:"properties"`
	Items       *node            `json:"items"`
	AnyOf       []*node          `json:"anyOf"`
	Additional  json.RawMessage  `json:"additionalProperties"`
	Defs        map[string]*node `json:"$defs"`
}

// Key is one configuration key: its dotted path ("channels[].urls[].url",
// "pricing.*.input"), what it takes, its default and what it does, all
// read from the schema.
type Key struct {
	Path, Type, Default, Description string
}

// defaultRe finds the "Default X." sentence of a description; X may hold
// dots ("1.0", "127.0.0.1:8080") but ends at a dot followed by a space or
// the end.
var defaultRe = regexp.MustCompile(`(?:^|\s)Default:? (.+?)\.(?:\s|$)`)

// Keys lists every key of the schema in document order of its sections,
// each mapping's keys sorted.
func Keys(schemaJSON []byte) ([]Key, error) {
	var root node
	if err := json.Unmarshal(schemaJSON, &root); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	var keys []Key
	var walk func(n *node, path string)
	walk = func(n *node, path string) {
		n = resolve(&root, n)
		for _, name := range sortedKeys(n.Properties) {
			p := n.Properties[name]
			kp := name
			if path != "" {
				kp = path + "." + name
			}
			keys = append(keys, describe(&root, kp, p))
			walk(p, kp)
		}
		if n.Items != nil {
			walk(n.Items, path+"[]")
		}
		for _, alt := range n.AnyOf {
			walk(alt, path)
		}
		if len(n.Additional) > 0 && n.Additional[0] == '{' {
			var add node
			if err := json.Unmarshal(n.Additional, &add); err == nil {
				keys = append(keys, describe(&root, path+".*", &add))
				walk(&add, path+".*")
			}
		}
	}
	walk(&root, "")
	return keys, nil
}

func resolve(root, n *node) *node {
	for n.Ref != "" {
		d := root.Defs[strings.TrimPrefix(n.Ref, "#/$defs/")]
		if d == nil {
			return n
		}
		// A description beside a $ref is the key's own; keep it.
		if n.Description != "" && d.Description != n.Description {
			c := *d
			c.Description = n.Description
			d = &c
		}
		n = d
	}
	return n
}

func sortedKeys(m map[string]*node) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// describe reads a key's type, default and description from its node.
func describe(root *node, path string, raw *node) Key {
	n := resolve(root, raw)
	desc := strings.TrimSpace(n.Description)
	if raw.Ref != "" && raw.Description == "" {
		desc = "" // the type's own description says what the type column says
	}
	k := Key{Path: path, Type: typeOf(root, raw)}
	if m := defaultRe.FindStringSubmatchIndex(desc); m != nil {
		k.Default = desc[m[2]:m[3]]
		desc = strings.TrimSpace(desc[:m[0]] + " " + desc[m[1]:])
	}
	k.Description = strings.ReplaceAll(desc, "|", `\|`)
	k.Default = strings.ReplaceAll(k.Default, "|", `\|`)
	return k
}

// typeOf names what a key takes, in the words the reference's
// introduction explains.
func typeOf(root, n *node) string {
	if n.Ref != "" {
		name := strings.TrimPrefix(n.Ref, "#/$defs/")
		switch name {
		case "duration", "size", "boolean", "protocol":
			return name
		case "nonNegInt":
			return "integer ≥ 0"
		case "nonNegNumber":
			return "number ≥ 0"
		case "envString":
			return "string"
		case "httpURL":
			return "URL"
		}
		return typeOf(root, resolve(root, n))
	}
	if n.Const != nil {
		return fmt.Sprintf("%v", n.Const)
	}
	if len(n.Enum) > 0 {
		var vs []string
		for _, v := range n.Enum {
			vs = append(vs, fmt.Sprintf("%v", v))
		}
		return strings.Join(vs, " \\| ")
	}
	if len(n.AnyOf) > 0 {
		var alts []string
		for _, a := range n.AnyOf {
			if a.Ref == "#/$defs/envString" {
				continue // every value may come from ${VAR}; the introduction says so
			}
			if t := typeOf(root, a); !slices.Contains(alts, t) {
				alts = append(alts, t)
			}
		}
		return strings.Join(alts, " or ")
	}
	switch t := n.Type.(type) {
	case string:
		switch t {
		case "array":
			if n.Items != nil {
				return "list of " + typeOf(root, n.Items)
			}
		case "object":
			return "mapping"
		}
		return t
	}
	return "any"
}

// Table renders the keys under section (a top-level key) as the markdown
// table the reference holds between its generated-section markers.
func Table(keys []Key, section string) string {
	var b strings.Builder
	b.WriteString("| key | type | default | description |\n|---|---|---|---|\n")
	for _, k := range keys {
		if k.Path != section && !strings.HasPrefix(k.Path, section+".") && !strings.HasPrefix(k.Path, section+"[]") {
			continue
		}
		def := k.Default
		if def == "" {
			def = "–"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", k.Path, k.Type, def, k.Description)
	}
	return b.String()
}

// Sections are the top-level keys in the order the reference presents them.
func Sections(keys []Key) []string {
	var s []string
	for _, k := range keys {
		if !strings.ContainsAny(k.Path, ".[") {
			s = append(s, k.Path)
		}
	}
	return s
}
