package main

import (
	"bufio"
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// importRules are the layers of ccload (docs/architecture.md). Each rule
// names the packages it covers (a path below the module, and everything
// under it) and the ccload packages they must not reach, directly or through
// another package. Only non-test code counts: tests may wire anything
// together.
var importRules = []struct {
	from   string
	forbid []string // "*" forbids every ccload package outside from
	why    string
}{
	{"protocol", []string{"*"}, "the wire formats are a leaf everything else builds on"},
	{"internal/clock", []string{"*"}, "the time source is a leaf"},
	{"internal/promtext", []string{"*"}, "the metrics format knows no metric of ours"},
	{"internal/gcfloor", []string{"*"}, "a runtime setting is a leaf"},
	{"internal/termtext", []string{"*"}, "laying out text for a terminal is a leaf"},
	{"internal/rawsock", []string{"*"}, "socket calls are a leaf"},
	{"engine/live", []string{"*"}, "the live request events are a leaf: the engine builds them, admin streams them"},
	{"engine/upstream", []string{"engine", "config", "protocol", "store", "pricing"}, "the upstream client moves bytes; it knows no route, config or wire format"},
	{"engine/listen", []string{"engine", "config", "protocol", "store", "pricing"}, "the client listener watches sockets; it knows no request, config or wire format"},
	{"engine/spend", []string{"engine"}, "the cost ledger is state the engine keeps; it knows no request"},
	{"engine/health", []string{"*"}, "a channel's outcome and load counters are a leaf"},
	{"schema", []string{"*"}, "the config file's JSON schema is data"},
	{"pricing", []string{"engine", "admin", "cmd", "tui"}, "prices are data the request path reads, never the reverse"},
	{"admin/adminapi", []string{"*"}, "clients of the admin API must not link the gateway"},
	{"config", []string{"engine"}, "the config describes the gateway, it does not run it"},
	{"store", []string{"engine"}, "storage knows rows, not requests"},
	{"engine", []string{"admin", "admin/adminapi", "cmd", "tui", "webui"}, "the request path knows nothing of its observers"},
	{"tui", []string{"engine", "store"}, "`ccload top` talks to a server only through adminapi"},
	{"cluster", []string{"engine", "admin"}, "the instance list knows rows and a count, not requests"},
	{"importer", []string{"engine"}, "the importer writes config, it runs nothing"},
}

// testOnly is the folder of code that exists only for tests (mock upstream,
// harnesses, benchmarks). Product code never links it, with the exceptions
// below: the hidden `ccload mock-upstream` and `ccload demo` commands serve
// the mock upstream so that a newcomer can try ccload without a provider.
const testOnly = "ccloadtest"

var testOnlyImporters = []string{"cmd"}

// within reports whether pkg is path or below it.
func within(pkg, path string) bool {
	return pkg == path || strings.HasPrefix(pkg, path+"/")
}

// module is ccload's module path; rules and the graph name packages
// relative to it ("engine/failure"), and the root package is "main".
const module = "github.com/ccload/ccload"

// relative is pkg's path below the module, or false for other modules.
func relative(pkg string) (string, bool) {
	if pkg == module {
		return "main", true
	}
	rel, ok := strings.CutPrefix(pkg, module+"/")
	return rel, ok
}

// importGraph is every ccload package's direct imports (non-test code),
// named relative to the module.
func importGraph(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, module+"/...")
	cmd.Dir = "../.." // the module root, wherever the checkout is
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
		if len(f) == 0 {
			continue
		}
		pkg, ok := relative(f[0])
		if !ok {
			continue
		}
		g[pkg] = nil
		for _, imp := range f[1:] {
			if rel, ok := relative(imp); ok {
				g[pkg] = append(g[pkg], rel)
			}
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

// TestProductNeverImportsTestCode: the test folder links mocks and
// harnesses that must not reach a user's binary by accident.
func TestProductNeverImportsTestCode(t *testing.T) {
	g := importGraph(t)
	for pkg, imps := range g {
		if within(pkg, testOnly) || slices.ContainsFunc(testOnlyImporters, func(p string) bool { return within(pkg, p) }) {
			continue
		}
		for _, imp := range imps {
			if within(imp, testOnly) {
				t.Errorf("%s imports %s: product code must not link the test folder (only %v may, for the hidden demo commands)", pkg, imp, testOnlyImporters)
			}
		}
	}
}
