package config

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Problem is one thing wrong with a config file, at a position.
//
// Line and Col are 1-based. Col is 0 when only the line is known (YAML
// syntax errors) and Line is 0 when neither is (the file as a whole).
type Problem struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Col  int    `json:"col"`
	Msg  string `json:"msg"`
}

// String formats p as "file:line:col: msg", dropping the parts that are 0.
func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d", p.Line)
		if p.Col > 0 {
			fmt.Fprintf(&b, ":%d", p.Col)
		}
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// Problems is every problem found in one file. Parse returns it (sorted) as
// its error, so callers can list the problems with errors.As:
//
//	var ps config.Problems
//	if errors.As(err, &ps) { for _, p := range ps { ... } }
type Problems []Problem

// Error returns one "file:line:col: msg" line per problem.
func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Sort orders the problems by file, line, column and message and drops
// exact duplicates (an alias used twice reports its problems once).
func (ps *Problems) Sort() {
	slices.SortStableFunc(*ps, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line),
			cmp.Compare(a.Col, b.Col), cmp.Compare(a.Msg, b.Msg))
	})
	*ps = slices.Compact(*ps)
}

// Err returns nil when there are no problems and ps otherwise.
func (ps Problems) Err() error {
	if len(ps) == 0 {
		return nil
	}
	return ps
}
