package main

import (
	"bufio"
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// importRules are the layers of ccload (README, "Layout"). Each rule names
// the packages it covers (a path and everything under it) and the ccload
// packages they must not reach, directly or through another package. Only
// non-test code counts: tests may wire anything together.
var importRules = []struct {
	from   string
	forbid []string // "*" forbids every ccload package outside from
	why    string
}{
	{"ccload/protocol", []string{"*"}, "the wire formats are a leaf everything else builds on"},
	{"ccload/clock", []string{"*"}, "the time source is a leaf"},
	{"ccload/promtext", []string{"*"}, "the metrics format knows no metric of ours"},
	{"ccload/gcfloor", []string{"*"}, "a runtime setting is a leaf"},
	{"ccload/adminapi", []string{"*"}, "clients of the admin API must not link the gateway"},
	{"ccload/config", []string{"ccload/engine"}, "the config describes the gateway, it does not run it"},
	{"ccload/store", []string{"ccload/engine"}, "storage knows rows, not requests"},
	{"ccload/engine", []string{"ccload/admin", "ccload/adminapi", "ccload/cmd", "ccload/tui", "ccload/webui"}, "the request path knows nothing of its observers"},
	{"ccload/tui", []string{"ccload/engine", "ccload/store"}, "`ccload top` talks to a server only through adminapi"},
	{"ccload/cluster", []string{"ccload/engine", "ccload/admin"}, "the instance list knows rows and a count, not requests"},
	{"ccload/importer", []string{"ccload/engine"}, "the importer writes config, it runs nothing"},
}

// within reports whether pkg is path or below it.
func within(pkg, path string) bool {
	return pkg == path || strings.HasPrefix(pkg, path+"/")
}

// importGraph is every ccload package's direct imports (non-test code).
func importGraph(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	g := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || !within(f[0], "ccload") {
			continue
		}
		for _, imp := range f[1:] {
			if within(imp, "ccload") {
				g[f[0]] = append(g[f[0]], imp)
			}
		}
		if _, ok := g[f[0]]; !ok {
			g[f[0]] = nil
		}
	}
	return g
}

// chain is the import path from pkg to the first package bad accepts, or
// nil when there is none (breadth first, so the path is a shortest one).
func chain(g map[string][]string, pkg string, bad func(string) bool) []string {
	prev := map[string]string{pkg: ""}
	queue := []string{pkg}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, imp := range g[p] {
			if _, seen := prev[imp]; seen {
				continue
			}
			prev[imp] = p
			if bad(imp) {
				path := []string{imp}
				for q := p; q != ""; q = prev[q] {
					path = append(path, q)
				}
				slices.Reverse(path)
				return path
			}
			queue = append(queue, imp)
		}
	}
	return nil
}

func TestImportRules(t *testing.T) {
	g := importGraph(t)
	for _, r := range importRules {
		covered := 0
		for pkg := range g {
			if !within(pkg, r.from) {
				continue
			}
			covered++
			bad := func(imp string) bool {
				if within(imp, r.from) {
					return false
				}
				for _, f := range r.forbid {
					if f == "*" || within(imp, f) {
						return true
					}
				}
				return false
			}
			if path := chain(g, pkg, bad); path != nil {
				t.Errorf("%s must not import %s (%s):\n\t%s", r.from, strings.Join(r.forbid, ", "), r.why, strings.Join(path, "\n\t  imports "))
			}
		}
		if covered == 0 {
			t.Errorf("rule for %s covers no package: was it moved?", r.from)
		}
	}
}
