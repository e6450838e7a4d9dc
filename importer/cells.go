package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// protocolName maps a ccLoad (or ccload) protocol name to ccload's; ""
// when unknown. ccLoad calls the OpenAI Responses API "codex".
func protocolName(p string) string {
	switch strings.ToLower(strings.TrimSpace(p)) {
	case "anthropic", "claude":
		return "anthropic"
	case "openai", "chat":
		return "openai"
	case "codex", "responses":
		return "responses"
	case "gemini":
		return "gemini"
	}
	return ""
}

// parseURLCell reads ccLoad's urls cell: a JSON array of {url, exact,
// protocols} (current exports), a JSON array of strings, or plain URLs
// separated by newlines or commas (older exports), where a trailing "#"
// marks an exact URL. channelType, from older exports, gives the protocol
// of URLs that declare none.
func parseURLCell(cell, channelType string, notes *rowNotes) []URL {
	type item struct {
		URL       string   `json:"url"`
		Exact     bool     `json:"exact"`
		Protocols []string `json:"protocols"`
	}
	var items []item
	switch {
	case cell == "":
		return nil
	case cell[0] == '[' || cell[0] == '{':
		var raw []json.RawMessage
		if cell[0] == '{' {
			raw = []json.RawMessage{json.RawMessage(cell)}
		} else if err := jsonUnmarshal(cell, &raw); err != nil {
			notes.add("urls is not valid JSON (%v)", err)
			return nil
		}
		for i, r := range raw {
			var it item
			if bytes.HasPrefix(bytes.TrimSpace(r), []byte(`"`)) {
				err := json.Unmarshal(r, &it.URL)
				if err != nil {
					notes.add("urls[%d] is not a string or {url, exact, protocols}", i)
					continue
				}
			} else if err := json.Unmarshal(r, &it); err != nil {
				notes.add("urls[%d] is not a string or {url, exact, protocols}", i)
				continue
			}
			items = append(items, it)
		}
	default:
		for _, u := range strings.FieldsFunc(cell, func(c rune) bool {
			return c == '\n' || c == '\r' || c == ',' || c == ';' || c == ' ' || c == '\t'
		}) {
			items = append(items, item{URL: u})
		}
	}

	var out []URL
	seen := map[string]bool{}
	for i, it := range items {
		u := strings.TrimSpace(it.URL)
		exact := it.Exact
		if strings.HasSuffix(u, "#") { // ccLoad's exact-URL marker
			u, exact = strings.TrimSuffix(u, "#"), true
		}
		if msg := badURL(u); msg != "" {
			notes.add("url %d %s; left out", i+1, msg)
			continue
		}
		if seen[u] {
			notes.add("url %d repeats an earlier URL; left out", i+1)
			continue
		}
		seen[u] = true
		nu := URL{URL: Lit(u), Exact: exact}
		for _, p := range it.Protocols {
			switch name := protocolName(p); {
			case name == "":
				notes.add("url %d: unknown protocol %q", i+1, oneLine(p, 30))
			case !slices.Contains(nu.Protocols, name):
				nu.Protocols = append(nu.Protocols, name)
			}
		}
		if len(nu.Protocols) == 0 && channelType != "" {
			if name := protocolName(channelType); name != "" {
				nu.Protocols = []string{name}
			} else {
				notes.add("channel_type %q is unknown; the URL's protocol is left to detection", oneLine(channelType, 30))
			}
		}
		out = append(out, nu)
	}
	return out
}

// badURL says what keeps u from being a channel URL, or "". It never
// repeats the URL, which may carry a password.
func badURL(u string) string {
	p, err := url.Parse(u)
	switch {
	case u == "":
		return "is empty"
	case err != nil:
		return "is not a valid URL"
	case p.Scheme != "http" && p.Scheme != "https":
		return "is not an http(s) URL"
	case p.Hostname() == "":
		return "has no host"
	}
	return ""
}

// versionTag matches the part after ":" in names like "qwen2.5:7b" or
// "llama3:latest": a tag of the model, not a rename.
var versionTag = regexp.MustCompile(`^(latest|[0-9][0-9a-z._-]*)$`)

// parseModelCell reads the models cell: a comma (or newline, ";", "|")
// separated list, or a JSON array of names and {model, redirect_model,
// disabled} objects, or a JSON object of name to upstream name. When the
// file has no model_redirects column (hand-made sheets), "public:upstream"
// is a rename; ccLoad's own export keeps renames in model_redirects and
// its names are read literally.
func parseModelCell(cell, redirects string, renames bool, notes *rowNotes) []Model {
	var models []Model
	add := func(m Model) {
		m.Name, m.Upstream = strings.TrimSpace(m.Name), strings.TrimSpace(m.Upstream)
		if m.Name == "" {
			return
		}
		if renames && m.Upstream == "" {
			if n, up, ok := strings.Cut(m.Name, ":"); ok && n != "" && up != "" && !versionTag.MatchString(up) {
				m.Name, m.Upstream = n, up
			}
		}
		if m.Upstream == m.Name {
			m.Upstream = ""
		}
		for _, x := range models {
			if x.Name == m.Name {
				notes.add("model %q is listed twice; the first is kept", oneLine(m.Name, 60))
				return
			}
		}
		models = append(models, m)
	}
	switch {
	case cell == "":
	case cell[0] == '{':
		kvs, err := orderedObject(cell)
		if err != nil {
			notes.add("models is not valid JSON (%v)", err)
		}
		for _, kv := range kvs {
			add(Model{Name: kv[0], Upstream: kv[1]})
		}
	case cell[0] == '[':
		var raw []json.RawMessage
		if err := jsonUnmarshal(cell, &raw); err != nil {
			notes.add("models is not valid JSON (%v)", err)
			break
		}
		for i, r := range raw {
			var name string
			if json.Unmarshal(r, &name) == nil {
				add(Model{Name: name})
				continue
			}
			var o struct {
				Model, Name, Upstream, Redirect string
				RedirectModel                   string `json:"redirect_model"`
				Disabled                        bool
			}
			if err := json.Unmarshal(r, &o); err != nil {
				notes.add("models[%d] is not a name or {model, redirect_model}", i)
				continue
			}
			add(Model{Name: firstOf(o.Model, o.Name), Upstream: firstOf(o.RedirectModel, o.Upstream, o.Redirect), Disabled: o.Disabled})
		}
	default:
		for _, n := range strings.FieldsFunc(cell, func(c rune) bool {
			return c == ',' || c == ';' || c == '|' || c == '\n' || c == '\r' || c == '\t'
		}) {
			add(Model{Name: n})
		}
	}

	if redirects == "" || redirects == "{}" || redirects == "null" {
		return models
	}
	kvs, err := orderedObject(redirects)
	if err != nil {
		notes.add("model_redirects is not a JSON object (%v)", err)
		return models
	}
	for _, kv := range kvs {
		i := -1
		for j, m := range models {
			if m.Name == kv[0] {
				i = j
			}
		}
		switch {
		case i < 0:
			notes.add("model_redirects names %q, which is not in models", oneLine(kv[0], 60))
		case models[i].Upstream == "" && kv[1] != kv[0]:
			models[i].Upstream = kv[1]
		}
	}
	return models
}

// orderedObject reads a JSON object of strings keeping the key order.
func orderedObject(s string) ([][2]string, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("want an object of names")
	}
	var out [][2]string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return out, err
		}
		var v string
		if err := dec.Decode(&v); err != nil {
			return out, fmt.Errorf("value of %q is not a string", k)
		}
		out = append(out, [2]string{k.(string), v})
	}
	return out, nil
}

// jsonUnmarshal is json.Unmarshal of a string, with errors that do not
// quote the input.
func jsonUnmarshal(s string, v any) error {
	if err := json.Unmarshal([]byte(s), v); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return fmt.Errorf("syntax error at byte %d", se.Offset)
		case errors.As(err, &te):
			return fmt.Errorf("unexpected %s at byte %d", te.Value, te.Offset)
		}
		return err
	}
	return nil
}

func firstOf(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}
