package importer

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ccload/ccload/config"
)

// SecretMode says what Render does with the literal keys a reader found.
type SecretMode int

const (
	// KeepSecrets writes literal keys as they are: for a file only the
	// operator reads.
	KeepSecrets SecretMode = iota
	// EnvSecrets writes a ${CHANNEL_KEY_N} reference in place of each
	// literal key and returns the values in Result.Env.
	EnvSecrets
)

// EnvVar is a variable Render introduced for a literal secret.
type EnvVar struct {
	Name  string
	Value string // the secret itself: never print it without consent
}

// Result is one rendered file.
type Result struct {
	YAML     []byte
	Env      []EnvVar // EnvSecrets: variables that replace literal secrets, in file order
	Literals int      // KeepSecrets: distinct literal secrets written into YAML
}

// commentWidth is where comments are wrapped (design: output fits 100
// columns).
const commentWidth = 96

// Render writes c as a complete ccload file. source names the input in
// the header comment.
func Render(c *Config, source string, mode SecretMode) (*Result, error) {
	w := &writer{mode: mode, vars: map[string]string{}, taken: map[string]bool{}, res: &Result{}}
	root := mapping()
	version := scalar("!!str", "version")
	version.HeadComment = w.header(c, source)
	root.Content = append(root.Content, version, scalar("!!int", "1"))

	server := mapping()
	add(server, "listen", strNode("127.0.0.1:8080"))
	pw := strNode("${CCLOAD_PASS}")
	pw.LineComment = "# dashboard and admin API; serve refuses to start without it"
	add(server, "admin_password", pw)
	if slices.ContainsFunc(c.Channels, func(ch *Channel) bool { return ch.OAuth != "" }) {
		key := strNode("${" + SecretKeyVar + "}")
		key.LineComment = "# encrypts signed-in accounts' credentials: openssl rand -hex 32"
		add(server, "secret_key", key)
	}
	add(root, "server", server)
	storage := mapping()
	add(storage, "driver", strNode(config.DriverSQLite))
	add(storage, "dsn", strNode("data/ccload.db"))
	add(root, "storage", storage)

	if len(c.Settings) > 0 {
		settings := mapping()
		for _, s := range c.Settings {
			w.setting(settings, s)
		}
		for i := 0; i+1 < len(settings.Content); i += 2 {
			add(root, settings.Content[i].Value, settings.Content[i+1])
		}
	}

	channels := &yaml.Node{Kind: yaml.SequenceNode}
	for _, ch := range c.Channels {
		channels.Content = append(channels.Content, w.channel(ch))
	}
	add(root, "channels", channels)

	if len(c.Pricing) > 0 {
		pricing := mapping()
		for _, p := range c.Pricing {
			m := mapping()
			m.Style = yaml.FlowStyle
			add(m, "input", num(p.Input))
			add(m, "output", num(p.Output))
			if p.CacheRead != 0 {
				add(m, "cache_read", num(p.CacheRead))
			}
			if p.CacheWrite != 0 {
				add(m, "cache_write", num(p.CacheWrite))
			}
			if p.Comment != "" {
				m.LineComment = "# " + p.Comment
			}
			add(pricing, p.Model, m)
		}
		key := add(root, "pricing", pricing)
		key.HeadComment = "# USD per million tokens; ccload prices by the model name clients use"
	}
	root.FootComment = strings.Join([]string{
		"# Client tokens: `ccload tokens new NAME` prints a new token once and appends",
		"# its entry here. Until then no client can use this gateway. An entry looks like:",
		"# tokens:",
		"#   - name: alice",
		"#     token_sha256: <sha256 of the token, 64 hex digits>",
		"#     models: [\"claude-*\"]   # globs; empty = all",
	}, "\n")

	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{root}}); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	w.res.YAML = buf.Bytes()
	return w.res, nil
}

// writer carries the secret bookkeeping of one Render.
type writer struct {
	mode  SecretMode
	vars  map[string]string // secret -> variable (EnvSecrets) or "" (counted, KeepSecrets)
	taken map[string]bool   // variable names handed out
	res   *Result

	lastComment string // of the previous setting

}

// header is the comment at the top of the file.
func (w *writer) header(c *Config, source string) string {
	lines := wrap(fmt.Sprintf("Imported by `ccload import` from %s (%s).", source, c.Format.describe()), "", "")
	lines = append(lines, "Review the comments, set the ${...} variables, then run `ccload check --offline -c FILE`.")
	if len(c.Notes) > 0 {
		lines = append(lines, "", "Not carried over:")
		for _, n := range c.Notes {
			lines = append(lines, wrap(n, "  - ", "    ")...)
		}
	}
	return comment(lines)
}

// setting places one routing value at its path, creating the sections.
func (w *writer) setting(root *yaml.Node, s Setting) {
	m := root
	for _, k := range s.Path[:len(s.Path)-1] {
		sub := lookup(m, k)
		if sub == nil {
			sub = mapping()
			add(m, k, sub)
		}
		m = sub
	}
	var v *yaml.Node
	switch x := s.Value.(type) {
	case int:
		v = scalar("!!int", strconv.Itoa(x))
	case float64:
		v = num(x)
	case bool:
		v = scalar("!!bool", strconv.FormatBool(x))
	default:
		v = strNode(fmt.Sprint(x))
	}
	// Several values from one source (cooldown_time sets four) say so once.
	if s.Comment != w.lastComment {
		v.LineComment = "# " + s.Comment
	}
	w.lastComment = s.Comment
	add(m, s.Path[len(s.Path)-1], v)
}

// channel renders one channel in the field order of ccload.example.yaml.
func (w *writer) channel(ch *Channel) *yaml.Node {
	m := mapping()
	var lines []string
	for _, c := range ch.Comments {
		lines = append(lines, wrap(c, "", "  ")...)
	}
	if len(ch.Notes) > 0 {
		lines = append(lines, "not carried over:")
		for _, n := range ch.Notes {
			lines = append(lines, wrap(n, "  - ", "    ")...)
		}
	}
	m.HeadComment = comment(lines)
	line := func(field string, n *yaml.Node) *yaml.Node {
		if c := ch.LineComments[field]; c != "" {
			n.LineComment = "# " + c
		}
		return n
	}
	add(m, "name", strNode(ch.Name))
	if ch.Priority != 0 {
		add(m, "priority", line("priority", scalar("!!int", strconv.Itoa(ch.Priority))))
	}
	if ch.Weight > 1 {
		add(m, "weight", line("weight", scalar("!!int", strconv.Itoa(ch.Weight))))
	}
	if len(ch.URLs) > 0 {
		urls := &yaml.Node{Kind: yaml.SequenceNode}
		for _, u := range ch.URLs {
			urls.Content = append(urls.Content, w.url(u))
		}
		line("urls", add(m, "urls", urls))
	}
	if len(ch.Keys) > 0 {
		keys := &yaml.Node{Kind: yaml.SequenceNode}
		for i, k := range ch.Keys {
			keys.Content = append(keys.Content, strNode(w.text(k, ch.Name, "KEY", i+1)))
		}
		line("keys", add(m, "keys", keys))
	}
	if ch.OAuth != "" {
		add(m, "oauth", strNode(ch.OAuth))
		accts := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, a := range ch.Accounts {
			accts.Content = append(accts.Content, strNode(a))
		}
		add(m, "accounts", accts)
	}
	if ch.KeyStrategy != "" {
		add(m, "key_strategy", line("key_strategy", strNode(ch.KeyStrategy)))
	}
	if len(ch.Models) > 0 {
		add(m, "models", models(ch.Models))
	}
	if ch.RPMLimit > 0 {
		add(m, "rpm_limit", scalar("!!int", strconv.Itoa(ch.RPMLimit)))
	}
	if ch.MaxConcurrency > 0 {
		add(m, "max_concurrency", scalar("!!int", strconv.Itoa(ch.MaxConcurrency)))
	}
	if ch.DailyCostLimit > 0 {
		add(m, "daily_cost_limit", num(ch.DailyCostLimit))
	}
	if ch.CostMultiplier != nil {
		add(m, "cost_multiplier", num(*ch.CostMultiplier))
	}
	if len(ch.Headers) > 0 {
		headers := &yaml.Node{Kind: yaml.SequenceNode}
		for i, h := range ch.Headers {
			r := mapping()
			r.Style = yaml.FlowStyle
			add(r, "action", strNode(h.Action))
			add(r, "name", strNode(escapeDollar(h.Name)))
			if h.Action != "remove" {
				add(r, "value", strNode(w.text(h.Value, ch.Name, "HEADER", i+1)))
			}
			headers.Content = append(headers.Content, r)
		}
		rewrite := mapping()
		add(rewrite, "headers", headers)
		add(m, "rewrite", rewrite)
	}
	if ch.Check != nil {
		c := mapping()
		c.Style = yaml.FlowStyle
		add(c, "model", strNode(escapeDollar(ch.Check.Model)))
		if ch.Check.Every > 0 {
			add(c, "every", strNode(config.Duration(ch.Check.Every).String()))
		}
		add(m, "check", c)
	}
	if ch.Disabled {
		add(m, "enabled", scalar("!!bool", "false"))
	}
	return m
}

// url renders one URL: a plain string when it has nothing but the URL.
func (w *writer) url(u URL) *yaml.Node {
	text := w.text(u.URL, "", "URL", 0)
	if !u.Exact && len(u.Protocols) == 0 {
		return strNode(text)
	}
	m := mapping()
	add(m, "url", strNode(text))
	if len(u.Protocols) > 0 {
		ps := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, p := range u.Protocols {
			ps.Content = append(ps.Content, strNode(p))
		}
		add(m, "protocols", ps)
	}
	if u.Exact {
		add(m, "exact", scalar("!!bool", "true"))
	}
	return m
}

// models renders the model list: a flow list of names when nothing is
// renamed or disabled, else one entry per line.
func models(ms []Model) *yaml.Node {
	plain := true
	for _, m := range ms {
		plain = plain && m.Upstream == "" && !m.Disabled
	}
	seq := &yaml.Node{Kind: yaml.SequenceNode}
	if plain {
		seq.Style = yaml.FlowStyle
	}
	for _, m := range ms {
		if m.Upstream == "" && !m.Disabled {
			seq.Content = append(seq.Content, strNode(escapeDollar(m.Name)))
			continue
		}
		e := mapping()
		e.Style = yaml.FlowStyle
		add(e, "name", strNode(escapeDollar(m.Name)))
		if m.Upstream != "" {
			add(e, "upstream", strNode(escapeDollar(m.Upstream)))
		}
		if m.Disabled {
			add(e, "disabled", scalar("!!bool", "true"))
		}
		seq.Content = append(seq.Content, e)
	}
	return seq
}

// text is a value as written: a literal secret is kept or replaced by a
// variable named after the channel (the same secret always gets the same
// variable, so an Azure key and its api-key header stay one).
func (w *writer) text(v Value, channel, kind string, i int) string {
	if !v.IsSecret() {
		return v.Text
	}
	name, seen := w.vars[v.Secret]
	if w.mode == KeepSecrets {
		if !seen {
			w.vars[v.Secret] = ""
			w.res.Literals++
		}
		return escapeDollar(v.Secret)
	}
	if !seen {
		base := envName(channel, i)
		if kind != "KEY" {
			base = strings.TrimSuffix(base, "_KEY_"+strconv.Itoa(i)) + "_" + kind + "_" + strconv.Itoa(i)
		}
		name = base
		for n := 2; w.taken[name]; n++ {
			name = base + "_" + strconv.Itoa(n)
		}
		w.taken[name] = true
		w.vars[v.Secret] = name
		w.res.Env = append(w.res.Env, EnvVar{Name: name, Value: v.Secret})
	}
	return "${" + name + "}"
}

// wrap breaks text into lines of at most commentWidth (less the "# "),
// the first starting with first, the others with rest.
func wrap(text, first, rest string) []string {
	var lines []string
	cur := first
	empty := true
	for _, word := range strings.Fields(text) {
		if !empty && len(cur)+1+len(word) > commentWidth-6 {
			lines = append(lines, cur)
			cur, empty = rest, true
		}
		if !empty {
			cur += " "
		}
		cur += word
		empty = false
	}
	return append(lines, cur)
}

// comment turns lines into a yaml.v3 comment ("# " before each line).
func comment(lines []string) string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimRight("# "+l, " ")
	}
	return strings.Join(out, "\n")
}

func mapping() *yaml.Node { return &yaml.Node{Kind: yaml.MappingNode} }

func scalar(tag, v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: v} }

// strNode is a string scalar; the encoder quotes it when it would read as
// something else (true, 1.5, a: b).
func strNode(v string) *yaml.Node { return scalar("!!str", v) }

// num is a number scalar, tagged so the encoder writes it bare.
func num(f float64) *yaml.Node {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return scalar("!!int", strconv.FormatFloat(f, 'f', -1, 64))
	}
	return scalar("!!float", strconv.FormatFloat(f, 'f', -1, 64))
}

// add appends key: v to mapping m and returns the key node.
func add(m *yaml.Node, key string, v *yaml.Node) *yaml.Node {
	k := strNode(key)
	m.Content = append(m.Content, k, v)
	return k
}

// lookup returns the value of key in mapping m, or nil.
func lookup(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}
