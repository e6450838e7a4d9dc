package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Load reads, expands (from the process environment) and validates the
// config file at path. On failure the error is a Problems (see Parse) or,
// when the file cannot be read, an *fs.PathError.
func Load(path string) (*Snapshot, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return Parse(path, data, OSEnv())
}

// Parse builds a Snapshot from the bytes of a config file. file names the
// file in problems (and is kept as Snapshot.File); relative ${file:...}
// paths are resolved from its directory.
//
// Parse reports every problem it finds, not just the first: the error is a
// Problems, sorted by position, whose Error() is one "file:line:col: msg"
// per line. The returned Snapshot is read-only.
func Parse(file string, data []byte, env Env) (*Snapshot, error) {
	d := &decoder{file: file, x: expander{env: env}}
	if file != "" {
		d.x.baseDir = filepath.Dir(file)
	}
	root := d.document(data)
	if root == nil && len(d.probs) > 0 {
		return nil, d.probs
	}
	s := &Snapshot{Server: DefaultServer, Storage: DefaultStorage, Routing: DefaultRouting, PriceCatalog: DefaultPriceCatalog}
	seen := rootFields.decode(d, root, "", s)
	if root == nil || (seen != nil && seen["version"] == nil) {
		at := root
		if root == nil {
			at = &yaml.Node{Line: 1, Column: 1}
		}
		d.addf(at, "", `version is required (add "version: 1" at the top)`)
	}
	d.checkRefs(s)
	d.checkSecretKey(s)
	if len(d.probs) > 0 {
		d.probs.Sort()
		return nil, d.probs
	}
	sum := sha256.Sum256(data)
	s.File, s.LoadedAt, s.SHA256 = file, time.Now(), hex.EncodeToString(sum[:])
	s.deps = d.x.deps
	s.index()
	return s, nil
}

// document parses the YAML text and returns the root node of its only
// document, nil for an empty file. Syntax errors become problems.
func (d *decoder) document(data []byte) *yaml.Node {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if !errors.Is(err, io.EOF) {
			d.syntax(err, data)
		}
		return nil
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil && len(extra.Content) > 0 && !isNull(extra.Content[0]):
		d.addf(extra.Content[0], "", "only one YAML document is allowed")
	case !errors.Is(err, io.EOF):
		d.syntax(err, data)
	}
	if len(doc.Content) == 0 {
		return nil
	}
	return doc.Content[0]
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlParserErrors are the messages of yaml.v3's parser (as opposed to its
// scanner). For these yaml.v3 v3.0.1 prints the 0-based line of the
// construct being parsed (the "[" of an unclosed flow list, say) where its
// scanner errors print a 1-based line; syntax adds the missing 1.
var yamlParserErrors = []string{
	"did not find expected <stream-start>", "did not find expected <document start>",
	"did not find expected node content", "did not find expected '-' indicator",
	"did not find expected key", "did not find expected ',' or ']'", "did not find expected ',' or '}'",
	"found undefined tag handle", "found duplicate %YAML directive", "found incompatible YAML document",
	"found duplicate %TAG directive",
}

// syntax turns a yaml.v3 parse error ("yaml: line 3: mapping values are not
// allowed in this context") into a problem on that line. yaml.v3 does not
// give the column.
func (d *decoder) syntax(err error, data []byte) {
	p := Problem{File: d.file, Msg: err.Error()}
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		p.Line, _ = strconv.Atoi(m[1])
		p.Msg = m[2]
		if slices.Contains(yamlParserErrors, p.Msg) {
			p.Line++
		}
		// The usual cause: "{" and "}" end a plain value inside [...] and
		// {...}, so `keys: [${KEY}]` needs quotes: `keys: ["${KEY}"]`.
		if strings.HasPrefix(p.Msg, "did not find expected ','") && bytes.Contains(lineOf(data, p.Line), []byte("${")) {
			p.Msg += ` (inside [...] or {...}, quote values that use ${...}: ["${KEY}"])`
		}
	} else if rest, ok := bytes.CutPrefix([]byte(p.Msg), []byte("yaml: ")); ok {
		p.Msg = string(rest)
	}
	p.Msg = "YAML syntax: " + p.Msg
	d.probs = append(d.probs, p)
}

// lineOf returns line n (1-based) of data, or nil.
func lineOf(data []byte, n int) []byte {
	for i := 1; len(data) > 0; i++ {
		line, rest, _ := bytes.Cut(data, []byte("\n"))
		if i == n {
			return line
		}
		data = rest
	}
	return nil
}

// checkRefs checks the channel names tokens mention.
func (d *decoder) checkRefs(s *Snapshot) {
	names := make([]string, 0, len(s.Channels))
	for _, c := range s.Channels {
		names = append(names, c.Name)
	}
	for _, r := range d.refs {
		if !slices.Contains(names, r.name) {
			d.addf(r.node, r.path, "unknown channel %q%s", r.name, suggestName(r.name, names))
		}
	}
}

// suggestName is suggest for names the file defines: a close match or
// nothing, since listing every channel would be noise.
func suggestName(name string, known []string) string {
	if c, ok := closest(name, known); ok {
		return fmt.Sprintf(" (did you mean %q?)", c)
	}
	return ""
}

// index builds the lookup tables behind Routes, Channel and TokenBySHA256.
func (s *Snapshot) index() {
	s.byName = make(map[string]*Channel, len(s.Channels))
	s.byModel = map[string][]Route{}
	for _, c := range s.Channels {
		s.byName[c.Name] = c
		s.debug = s.debug || c.Debug
		if !c.Enabled {
			continue
		}
		for _, m := range c.Models {
			if !m.Disabled {
				s.byModel[m.Name] = append(s.byModel[m.Name], Route{Channel: c, Model: m.Name, Upstream: m.Upstream})
			}
		}
	}
	s.byTokenSH = make(map[string]*Token, len(s.Tokens))
	for _, t := range s.Tokens {
		s.byTokenSH[t.SHA256] = t
	}
}

// Models returns every model name a client can be routed to (enabled models
// of enabled channels), sorted.
func (s *Snapshot) Models() []string {
	out := make([]string, 0, len(s.byModel))
	for m := range s.byModel {
		out = append(out, m)
	}
	slices.Sort(out)
	return out
}
