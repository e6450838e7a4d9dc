package config

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

var rewriteFields = fields[Rewrite]{
	{"headers", func(d *decoder, n *yaml.Node, p string, r *Rewrite) {
		d.seq(n, p, func(_ int, item *yaml.Node, ip string) {
			var h HeaderRule
			seen := headerRuleFields.decode(d, item, ip, &h)
			if seen != nil && d.checkRule(item, ip, h.Action, seen) {
				if h.Name == "" {
					d.addf(d.orNode(seen["name"], item), ip, "name is required")
				} else if !validHeaderName(h.Name) {
					d.addf(seen["name"], join(ip, "name"), "invalid header name %q", h.Name)
				} else {
					r.Headers = append(r.Headers, h)
				}
			}
		})
	}},
	{"body", func(d *decoder, n *yaml.Node, p string, r *Rewrite) {
		d.seq(n, p, func(_ int, item *yaml.Node, ip string) {
			var b BodyRule
			seen := bodyRuleFields.decode(d, item, ip, &b)
			if seen != nil && d.checkRule(item, ip, b.Action, seen) {
				if b.Path == "" {
					d.addf(d.orNode(seen["path"], item), ip, "path is required")
				} else if b.Action == ActionOverride && b.Value == nil {
					return // the value failed to decode: reported
				} else {
					r.Body = append(r.Body, b)
				}
			}
		})
	}},
}

var headerRuleFields = fields[HeaderRule]{
	actionField[HeaderRule](func(h *HeaderRule) *string { return &h.Action }),
	strField("name", func(h *HeaderRule) *string { return &h.Name }),
	strField("value", func(h *HeaderRule) *string { return &h.Value }),
}

var bodyRuleFields = fields[BodyRule]{
	actionField[BodyRule](func(b *BodyRule) *string { return &b.Action }),
	strField("path", func(b *BodyRule) *string { return &b.Path }),
	{"value", func(d *decoder, n *yaml.Node, p string, b *BodyRule) {
		var buf bytes.Buffer
		if d.json(n, p, &buf) {
			b.Value = json.RawMessage(buf.Bytes())
		}
	}},
}

func actionField[T any](get func(*T) *string) field[T] {
	return field[T]{"action", func(d *decoder, n *yaml.Node, p string, v *T) {
		switch a, ok := d.str(n, p); {
		case !ok:
		case a == ActionOverride || a == ActionRemove:
			*get(v) = a
		default:
			d.addf(n, p, "unknown action %q (want override or remove)", a)
		}
	}}
}

// checkRule checks what header and body rules share: an action, and a value
// exactly when the action is override. It reports false when the rule is
// unusable.
func (d *decoder) checkRule(item *yaml.Node, ip, action string, seen map[string]*yaml.Node) bool {
	hasValue := seen["value"] != nil
	switch {
	case action == "" && seen["action"] == nil:
		d.addf(item, ip, "action is required (override or remove)")
	case action == "":
		// unknown action: reported
	case action == ActionOverride && !hasValue:
		d.addf(item, ip, "value is required with action override")
	case action == ActionRemove && hasValue:
		d.addf(seen["value"], join(ip, "value"), "not used with action remove")
	default:
		return true
	}
	return false
}

// validHeaderName reports whether s is an HTTP field name (RFC 9110 token).
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0 {
			continue
		}
		return false
	}
	return true
}

// json writes the YAML value n as JSON: mappings keep their key order,
// strings are expanded like every other string, and an expanded plain scalar
// takes the type its text has (`value: ${MAX:-4096}` is the number 4096),
// as if it had been written there. It reports false after recording a
// problem.
func (d *decoder) json(n *yaml.Node, path string, buf *bytes.Buffer) bool {
	n = d.resolve(n)
	if n == nil {
		return false
	}
	switch n.Kind {
	case yaml.MappingNode:
		buf.WriteByte('{')
		ok := true
		for i, kv := range d.pairs(n, path) {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeJSONString(buf, kv.key.Value)
			buf.WriteByte(':')
			ok = d.json(kv.val, join(path, kv.key.Value), buf) && ok
		}
		buf.WriteByte('}')
		return ok
	case yaml.SequenceNode:
		buf.WriteByte('[')
		ok := true
		for i, item := range n.Content {
			if i > 0 {
				buf.WriteByte(',')
			}
			ok = d.json(item, index(path, i), buf) && ok
		}
		buf.WriteByte(']')
		return ok
	}
	if isNull(n) {
		buf.WriteString("null")
		return true
	}
	s, ok := d.scalar(n, path, "value")
	if !ok {
		return false
	}
	tag := n.Tag
	if s.expanded && n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0 {
		tag = resolvePlain(s.text)
	}
	switch tag {
	case "!!null":
		buf.WriteString("null")
	case "!!bool":
		buf.WriteString(strconv.FormatBool(strings.EqualFold(s.text, "true")))
	case "!!int":
		if v, err := strconv.ParseInt(s.text, 0, 64); err == nil {
			buf.WriteString(strconv.FormatInt(v, 10))
		} else if u, err := strconv.ParseUint(s.text, 0, 64); err == nil {
			buf.WriteString(strconv.FormatUint(u, 10))
		} else {
			d.addf(n, path, "integer %s is out of range", s.text)
			return false
		}
	case "!!float":
		f, err := strconv.ParseFloat(strings.ReplaceAll(s.text, "_", ""), 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			d.addf(n, path, "number %s cannot be written as JSON", s.text)
			return false
		}
		buf.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
	default: // !!str, !!timestamp, !!binary and custom tags: the text
		writeJSONString(buf, s.text)
	}
	return true
}

// resolvePlain is the YAML 1.2 core schema type of a plain scalar's text,
// used for values that came out of an expansion.
func resolvePlain(s string) string {
	switch s {
	case "", "~", "null", "Null", "NULL":
		return "!!null"
	case "true", "True", "TRUE", "false", "False", "FALSE":
		return "!!bool"
	}
	if _, err := strconv.ParseInt(s, 0, 64); err == nil {
		return "!!int"
	}
	if c := s[0]; c == '-' || c == '+' || c == '.' || c >= '0' && c <= '9' {
		if _, err := strconv.ParseFloat(s, 64); err == nil && !strings.ContainsAny(s, "_xXpP") {
			return "!!float"
		}
	}
	return "!!str"
}

func writeJSONString(buf *bytes.Buffer, s string) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)           // a string always encodes
	buf.Truncate(buf.Len() - 1) // Encode appends "\n"
}
