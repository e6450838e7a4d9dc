package docscheck

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestReadmeLayoutMatchesPackages: README's layout table names exactly the
// top-level folders that hold Go packages (as `go list ./...` sees them),
// plus main.go for the root package, so the table cannot describe a folder
// that moved or miss one that appeared.
func TestReadmeLayoutMatchesPackages(t *testing.T) {
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	table := regexp.MustCompile(`(?s)<!-- layout:[^>]*-->\n(.*?)<!-- /layout -->`).FindStringSubmatch(string(raw))
	if table == nil {
		t.Fatal("README.md has no <!-- layout: … --> table")
	}
	var inDoc []string
	for _, row := range strings.Split(table[1], "\n") {
		cells := strings.Split(row, "|")
		if len(cells) < 3 {
			continue
		}
		for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(cells[1], -1) {
			inDoc = append(inDoc, strings.TrimSuffix(m[1], "/"))
		}
	}

	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}", "../../...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var inTree []string
	for _, pkg := range strings.Fields(string(out)) {
		rel, ok := relative(pkg)
		if !ok {
			continue
		}
		top, _, _ := strings.Cut(rel, "/")
		if top == "" {
			top = "main.go"
		}
		if !slices.Contains(inTree, top) {
			inTree = append(inTree, top)
		}
	}
	slices.Sort(inDoc)
	slices.Sort(inTree)
	for _, p := range inTree {
		if !slices.Contains(inDoc, p) {
			t.Errorf("README's layout table lacks %s/, which holds Go packages", p)
		}
	}
	for _, p := range inDoc {
		if !slices.Contains(inTree, p) {
			t.Errorf("README's layout table names %s, which holds no Go package", p)
		}
	}
}

const module = "github.com/ccload/ccload"

// relative is pkg's path below the module ("" for the root package), or
// false for a package of another module.
func relative(pkg string) (string, bool) {
	if pkg == module {
		return "", true
	}
	return strings.CutPrefix(pkg, module+"/")
}
