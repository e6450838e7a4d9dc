//go:build clients

package clients

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
)

// cell is one run: a client, an upstream family, a text or a tool turn.
type cell struct {
	client *client
	family string
	tool   bool
}

func (c cell) turn() string {
	if c.tool {
		return "tool"
	}
	return "text"
}

// results collects each cell's outcome for the table.
type results struct {
	mu  sync.Mutex
	got map[cell]string // "pass" or "FAIL"
}

func (r *results) set(c cell, v string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got[c] = v
}

// TestClients runs every client × family × {text, tool} through ccload to
// the mock upstream and prints the results table.
func TestClients(t *testing.T) {
	dir := os.Getenv("CCLOAD_CLIENTS_DIR")
	if dir == "" {
		t.Fatal("CCLOAD_CLIENTS_DIR is not set: run `make test-clients`, or clients/install.sh and set it to the directory it prints")
	}
	versions := map[string]string{}
	for _, c := range clients {
		v, err := pkgVersion(dir, c.pkg)
		if err != nil {
			t.Fatalf("%s: %v (run clients/install.sh)", c.name, err)
		}
		versions[c.name] = v
	}
	r := newRig(t, buildCcload(t))
	rec := newRecorder(t)
	res := &results{got: map[cell]string{}}
	t.Cleanup(func() { printTable(versions, res) })

	for _, cl := range clients {
		for _, fam := range families {
			if len(cl.families) > 0 && !slices.Contains(cl.families, fam) {
				continue
			}
			for _, tool := range []bool{false, true} {
				c := cell{client: cl, family: fam, tool: tool}
				t.Run(cl.name+"/"+fam+"/"+c.turn(), func(t *testing.T) {
					t.Parallel()
					res.set(c, "FAIL")
					if runCell(t, dir, r, rec, c) {
						res.set(c, "pass")
					}
				})
			}
		}
	}
}

// runCell runs one cell and checks what the CLI printed and what reached
// the mock; it reports whether the cell passed.
func runCell(t *testing.T, dir string, r *rig, rec *recorder, c cell) bool {
	nonce := newNonce(t)
	prompt := "Say hello. (ccload-text-" + nonce + ")"
	want := mockupstream.DefaultText
	if c.tool {
		prompt = "Run the shell command for ccload-shell-" + nonce + " and report what it printed."
		want = mockupstream.ShellSawPrefix + mockupstream.ShellOutputPrefix + nonce
	}
	out := c.client.run(t, dir, r.base, clientToken(c.family), prompt, c.tool)
	reqs := requestsWith(r.mock, nonce)
	rec.keep(c, reqs)

	ok := true
	fail := func(format string, args ...any) {
		ok = false
		t.Errorf(format, args...)
	}
	if out.err != nil {
		fail("%s exited: %v", c.client.bin, out.err)
	}
	if !strings.Contains(out.stdout, want) {
		fail("stdout lacks %q", want)
	}
	for _, bad := range c.client.badStderr {
		if strings.Contains(out.stderr, bad) {
			fail("stderr says %q", bad)
		}
	}
	if len(reqs) == 0 {
		fail("no request with the nonce reached the mock upstream")
	}
	for _, q := range reqs {
		if q.Family != c.family {
			fail("a request reached the mock as %s %s, want family %s", q.Method, q.Path, c.family)
		}
		if q.Key != upstreamKey(c.family) {
			fail("the mock got credential %q, want the channel's key (never the client token)", q.Key)
		}
	}
	if c.tool && len(reqs) < 2 {
		fail("the mock saw %d request(s) for the tool turn, want the call and the result", len(reqs))
	}
	if !ok {
		serveLog, _ := os.ReadFile(filepath.Join(r.dir, "serve.log")) // shared by the runs: its tail, for context
		t.Logf("stdout:\n%s\nstderr:\n%s\nmock saw %d request(s): %s\nccload serve log:\n%s",
			tail(out.stdout, 20), tail(out.stderr, 30), len(reqs), paths(reqs), tail(string(serveLog), 10))
	}
	return ok
}

// requestsWith returns the recorded generation requests whose body holds
// the nonce.
func requestsWith(m *mockupstream.Server, nonce string) []mockupstream.Recorded {
	var out []mockupstream.Recorded
	for _, q := range m.Requests() {
		if strings.Contains(string(q.Body), nonce) {
			out = append(out, q)
		}
	}
	return out
}

func paths(reqs []mockupstream.Recorded) string {
	var p []string
	for _, q := range reqs {
		p = append(p, q.Method+" "+q.Path+" "+q.Model)
	}
	return strings.Join(p, ", ")
}

func newNonce(t *testing.T) string {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// pkgVersion reads the installed version of an npm package.
func pkgVersion(dir, pkg string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "node_modules", pkg, "package.json"))
	if err != nil {
		return "", err
	}
	var p struct{ Version string }
	if err := json.Unmarshal(b, &p); err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", ".bin")); err != nil {
		return "", err
	}
	return p.Version, nil
}

// printTable prints client × family × turn, then a closing count.
func printTable(versions map[string]string, res *results) {
	res.mu.Lock()
	defer res.mu.Unlock()
	if len(res.got) == 0 {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-36s %-5s", "client (version, model)", "turn")
	for _, f := range families {
		fmt.Fprintf(&b, " %-10s", f)
	}
	b.WriteString("\n")
	pass, failed := 0, 0
	for _, cl := range clients {
		label := cl.name + " " + versions[cl.name]
		if cl.model != "" {
			label += " " + cl.model
		}
		for _, tool := range []bool{false, true} {
			c := cell{client: cl, tool: tool}
			fmt.Fprintf(&b, "%-36s %-5s", label, c.turn())
			for _, f := range families {
				c.family = f
				v, ran := res.got[c]
				switch {
				case !ran:
					v = "-"
				case v == "pass":
					pass++
				default:
					failed++
				}
				fmt.Fprintf(&b, " %-10s", v)
			}
			b.WriteString("\n")
		}
	}
	fmt.Fprintf(&b, "clients: %d passed, %d failed\n", pass, failed)
	fmt.Print(b.String())
}
