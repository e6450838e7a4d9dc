package config

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Env is what expansion may read: environment variables for ${VAR} and
// files for ${file:PATH}. A nil Lookup is an empty environment; a nil
// ReadFile makes every ${file:...} fail. The zero Env therefore reads
// nothing from the machine, which is what tests and `check` of a file that
// must stand alone want; OSEnv is the process's real environment.
type Env struct {
	Lookup   func(string) (string, bool)
	ReadFile func(string) ([]byte, error)
}

// OSEnv returns the process environment (os.LookupEnv) and os.ReadFile.
func OSEnv() Env { return Env{Lookup: os.LookupEnv, ReadFile: os.ReadFile} }

// maxExpandDepth bounds nested defaults such as ${A:-${B:-${C}}}.
const maxExpandDepth = 8

// expander expands one scalar at a time. It records every ${file:...} it
// reads, so a reload can tell whether a referenced file changed even when the
// config file did not.
type expander struct {
	env     Env
	baseDir string            // relative ${file:...} paths are resolved from here
	deps    map[string]string // absolute-or-as-resolved path -> sha256 hex of contents, "" if unreadable
}

// expand returns s with ${VAR}, ${VAR:-default}, ${file:PATH} (and
// ${file:PATH:-default}) replaced and "$$" turned into "$". A "$" followed by
// anything else is kept as it is. The value of a variable or file is never
// expanded again; only a default is, because it is part of the file.
func (x *expander) expand(s string) (string, error) { return x.expandDepth(s, 0) }

func (x *expander) expandDepth(s string, depth int) (string, error) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	if depth > maxExpandDepth {
		return "", errors.New("defaults nested too deeply")
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c != '$' || i+1 == len(s):
			b.WriteByte(c)
			i++
		case s[i+1] == '$':
			b.WriteByte('$')
			i += 2
		case s[i+1] == '{':
			end := closingBrace(s, i+2)
			if end < 0 {
				return "", errors.New(`unterminated "${" (write "$$" for a literal "$")`)
			}
			v, err := x.expr(s[i+2:end], depth)
			if err != nil {
				return "", err
			}
			b.WriteString(v)
			i = end + 1
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), nil
}

// closingBrace returns the index of the "}" closing the "${" whose body
// starts at i, skipping nested "${...}" and "$$", or -1.
func closingBrace(s string, i int) int {
	depth := 0
	for ; i < len(s); i++ {
		switch {
		case strings.HasPrefix(s[i:], "$$"):
			i++
		case strings.HasPrefix(s[i:], "${"):
			depth++
			i++
		case s[i] == '}':
			if depth == 0 {
				return i
			}
			depth--
		}
	}
	return -1
}

// expr evaluates the body of one ${...}.
func (x *expander) expr(body string, depth int) (string, error) {
	name, def, hasDef := strings.Cut(body, ":-")
	if p, ok := strings.CutPrefix(name, "file:"); ok {
		return x.file(p, def, hasDef, depth)
	}
	if !validVarName(name) {
		return "", fmt.Errorf("invalid variable name %q in ${%s}", name, body)
	}
	var v string
	var set bool
	if x.env.Lookup != nil {
		v, set = x.env.Lookup(name)
	}
	if set && (v != "" || !hasDef) { // ":-" also replaces an empty value, as in sh
		return v, nil
	}
	if hasDef {
		return x.expandDepth(def, depth+1)
	}
	return "", fmt.Errorf("environment variable %s is not set (write ${%s:-default} to give a default)", name, name)
}

func (x *expander) file(p, def string, hasDef bool, depth int) (string, error) {
	if p == "" {
		return "", errors.New("${file:} needs a path")
	}
	if !filepath.IsAbs(p) && x.baseDir != "" {
		p = filepath.Join(x.baseDir, p)
	}
	var data []byte
	err := errors.New("reading files is not enabled")
	if x.env.ReadFile != nil {
		data, err = x.env.ReadFile(p)
	}
	if x.deps == nil {
		x.deps = map[string]string{}
	}
	if err != nil {
		x.deps[p] = ""
		if hasDef {
			return x.expandDepth(def, depth+1)
		}
		return "", fmt.Errorf("${file:%s}: %v", p, unwrapPath(err))
	}
	sum := sha256.Sum256(data)
	x.deps[p] = hex.EncodeToString(sum[:])
	return strings.TrimRight(string(data), "\r\n"), nil
}

// unwrapPath drops the path from an *fs.PathError, which the message names
// already.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func validVarName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (i > 0 && c >= '0' && c <= '9') {
			continue
		}
		return false
	}
	return true
}
