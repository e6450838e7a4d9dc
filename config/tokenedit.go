package config

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ccload/ccload/config/yamlnode"
)

// Editing the config file's text in place (for `ccload tokens new`): only
// the new lines are written, so comments, order, quoting and blank lines of
// everything else keep their bytes.

// NewToken is the entry AddToken appends to tokens: (`ccload tokens new`).
type NewToken struct {
	Name, SHA256 string
	Models       []string
}

// node returns the entry as a YAML mapping; flow makes it {…}.
func (t NewToken) node(flow bool) *yaml.Node {
	str := func(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	if flow {
		m.Style = yaml.FlowStyle
	}
	m.Content = append(m.Content, str("name"), str(t.Name), str("token_sha256"), str(t.SHA256))
	if len(t.Models) > 0 {
		seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
		for _, g := range t.Models {
			seq.Content = append(seq.Content, str(g))
		}
		m.Content = append(m.Content, str("models"), seq)
	}
	return m
}

// render encodes n alone, without the trailing newline.
func render(n *yaml.Node) (string, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		return "", err
	}
	enc.Close()
	return strings.TrimRight(b.String(), "\n"), nil
}

// AddToken appends t to the tokens: list of the YAML config file data and
// returns the new file.
//
// It edits the text, not a re-encoded tree, so everything else keeps its
// bytes: yaml.v3 nodes locate the list (and tell its style and indentation)
// and the new entry is spliced in as the existing entries are written:
//
//   - block list: a new "- name: …" entry after the last one, indented
//     like it (a flow-style entry "- {…}" if the last one is);
//   - flow list "tokens: [ … ]", including "[]": ", {…}" before the "]";
//   - "tokens:" with no value (or ~ / null): a block list under it;
//   - no tokens key: "tokens:" and the list at the end of the file.
//
// The result is checked by parsing it: it must be the input plus the
// entry. If not (an exotic layout), the node tree is edited and re-encoded
// instead, and reformatted is true.
func AddToken(data []byte, t NewToken) (out []byte, reformatted bool, err error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, false, fmt.Errorf("not valid YAML: %w", err)
	}
	if len(doc.Content) == 0 {
		doc.Content = []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, false, errors.New("the document is not a mapping")
	}
	seq, seqAt := yamlnode.Find(root, "tokens")
	if seq != nil {
		if seq.Kind == yaml.AliasNode || (seq.Kind != yaml.SequenceNode && !(seq.Kind == yaml.ScalarNode && seq.Tag == "!!null")) {
			return nil, false, errors.New("tokens: is not a list")
		}
		for _, item := range seq.Content {
			if name, _ := yamlnode.Find(item, "name"); name != nil && name.Value == t.Name {
				return nil, false, fmt.Errorf("a token named %q exists already (line %d)", t.Name, name.Line)
			}
		}
	}
	out, err = spliceToken(data, root, seq, seqAt, t)
	if err == nil && sameButToken(data, out, t) {
		return out, false, nil
	}
	// Fallback: edit the tree and re-encode the document.
	entry := t.node(false)
	switch {
	case seq == nil:
		root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "tokens"},
			&yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: []*yaml.Node{entry}})
	case seq.Kind == yaml.ScalarNode:
		*seq = yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: []*yaml.Node{entry}}
	default:
		if seq.Style&yaml.FlowStyle != 0 {
			entry.Style = yaml.FlowStyle
		}
		seq.Content = append(seq.Content, entry)
	}
	s, err := render(&doc)
	if err != nil {
		return nil, false, err
	}
	out = []byte(s + "\n")
	if !sameButToken(data, out, t) {
		return nil, false, errors.New("could not add the token without changing the rest of the file")
	}
	return out, true, nil
}

// spliceToken inserts the entry's text at the right place of data.
func spliceToken(data []byte, root, seq *yaml.Node, at int, t NewToken) ([]byte, error) {
	if root.Style&yaml.FlowStyle != 0 {
		return nil, errors.New("flow-style document")
	}
	eol := "\n"
	if bytes.Contains(data, []byte("\r\n")) {
		eol = "\r\n"
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	join := func(ls [][]byte) []byte { return bytes.Join(ls, nil) }
	insertAt := func(i int, text string) []byte {
		out := slices.Clone(lines[:i])
		if i > 0 && !bytes.HasSuffix(out[i-1], []byte("\n")) {
			out[i-1] = append(bytes.Clone(out[i-1]), eol...)
		}
		return join(append(append(out, []byte(text)), lines[i:]...))
	}
	dashCol, keyCol := sequenceIndent(root) // for a new block list

	switch {
	case seq == nil: // no tokens key: append the section at the end
		block, err := blockEntry(t, dashCol, keyCol, eol, false)
		if err != nil {
			return nil, err
		}
		return insertAt(len(lines), "tokens:"+eol+block), nil

	case seq.Kind == yaml.ScalarNode: // tokens: (null)
		key := root.Content[at]
		i := key.Line - 1
		if line := lines[i]; seq.Line == key.Line && seq.Value != "" { // explicit ~ or null: cut it
			c := seq.Column - 1
			rest := strings.TrimRight(string(line[c+len(seq.Value):]), "\r\n")
			if strings.TrimSpace(rest) != "" && !strings.HasPrefix(strings.TrimSpace(rest), "#") {
				return nil, errors.New("unexpected text after the tokens key")
			}
			// Clone: line shares its bytes with data.
			lines[i] = append(bytes.Clone(bytes.TrimRight(line[:c], " ")), rest+eol...)
		}
		block, err := blockEntry(t, dashCol+key.Column-1, keyCol+key.Column-1, eol, false)
		if err != nil {
			return nil, err
		}
		return insertAt(i+1, block), nil

	case seq.Style&yaml.FlowStyle != 0: // [ … ]
		start := offset(lines, seq.Line, seq.Column)
		q := lastInFlow(data, start)
		if q < 0 {
			return nil, errors.New("unterminated flow list")
		}
		text, err := render(t.node(true))
		if err != nil {
			return nil, err
		}
		switch data[q] {
		case '[':
		case ',': // keep the trailing comma style
			text = " " + text + ","
		default:
			text = ", " + text
		}
		return append(append(bytes.Clone(data[:q+1]), text...), data[q+1:]...), nil

	default: // block list: after the last entry's last line
		last := seq.Content[len(seq.Content)-1]
		end := len(lines)
		if at+2 < len(root.Content) {
			end = root.Content[at+2].Line - 1
		}
		// Skip back over blank lines, document markers and the comments
		// that belong to what follows (indented no deeper than the dash);
		// a comment indented deeper belongs to the last entry.
		i := end - 1
		for i >= last.Line-1 {
			l := strings.TrimRight(string(lines[i]), "\r\n")
			s := strings.TrimSpace(l)
			indent := len(l) - len(strings.TrimLeft(l, " \t"))
			if s != "" && s != "---" && s != "..." && (!strings.HasPrefix(s, "#") || indent > seq.Column-1) {
				break
			}
			i--
		}
		block, err := blockEntry(t, seq.Column-1, last.Column-1, eol, last.Style&yaml.FlowStyle != 0)
		if err != nil {
			return nil, err
		}
		return insertAt(i+1, block), nil
	}
}

// sequenceIndent guesses how the file indents a block list under a key,
// from the first block list of a top-level key: the dash's and the entry
// keys' offsets from the parent key. The default is 2 and 4.
func sequenceIndent(root *yaml.Node) (dash, key int) {
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if v.Kind == yaml.SequenceNode && v.Style&yaml.FlowStyle == 0 && len(v.Content) > 0 && v.Line > k.Line {
			item := v.Content[0]
			if item.Kind == yaml.MappingNode && item.Style&yaml.FlowStyle == 0 && item.Line == v.Line {
				return v.Column - k.Column, item.Column - k.Column
			}
		}
	}
	return 2, 4
}

// blockEntry renders the entry as list lines: the dash at column dash
// (0-based), the mapping keys at column key.
func blockEntry(t NewToken, dash, key int, eol string, flow bool) (string, error) {
	text, err := render(t.node(flow))
	if err != nil {
		return "", err
	}
	gap := max(key-dash-1, 1)
	var b strings.Builder
	for i, l := range strings.Split(text, "\n") {
		if i == 0 {
			b.WriteString(strings.Repeat(" ", dash) + "-" + strings.Repeat(" ", gap) + l + eol)
		} else {
			b.WriteString(strings.Repeat(" ", key) + l + eol)
		}
	}
	return b.String(), nil
}

// offset is the byte offset of a 1-based line and column.
func offset(lines [][]byte, line, col int) int {
	n := 0
	for i := 0; i < line-1 && i < len(lines); i++ {
		n += len(lines[i])
	}
	return n + col - 1
}

// lastInFlow scans the flow list whose "[" is at start and returns the
// offset of its last character before the closing "]" that is neither
// blank nor in a comment (the "[" itself for an empty list); -1 if the list
// does not close. Quoted strings and nested brackets are skipped whole.
func lastInFlow(data []byte, start int) int {
	depth, last := 0, start
	for i := start; i < len(data); i++ {
		switch c := data[i]; c {
		case '[', '{':
			depth++
		case ']', '}':
			depth--
			if depth == 0 {
				return last
			}
		case '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
		case '\'':
			for i++; i < len(data); i++ {
				if data[i] == '\'' {
					if i+1 < len(data) && data[i+1] == '\'' {
						i++
						continue
					}
					break
				}
			}
		case '#':
			if data[i-1] == ' ' || data[i-1] == '\t' || data[i-1] == '\n' {
				for i+1 < len(data) && data[i+1] != '\n' {
					i++
				}
				continue
			}
		case ' ', '\t', '\r', '\n':
			continue
		}
		last = i
	}
	return -1
}

// sameButToken reports whether out parses to what data parses to with t
// appended to tokens.
func sameButToken(data, out []byte, t NewToken) bool {
	var before, after map[string]any
	if yaml.Unmarshal(data, &before) != nil || yaml.Unmarshal(out, &after) != nil {
		return false
	}
	if before == nil {
		before = map[string]any{}
	}
	want := map[string]any{"name": t.Name, "token_sha256": t.SHA256}
	if len(t.Models) > 0 {
		ms := make([]any, len(t.Models))
		for i, m := range t.Models {
			ms[i] = m
		}
		want["models"] = ms
	}
	list, _ := before["tokens"].([]any)
	before["tokens"] = append(list, want)
	return reflect.DeepEqual(before, after)
}
