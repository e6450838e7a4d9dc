package cmd

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ccload/ccload/config"
)

// testEntry is what every testdata/tokensnew case adds.
var testEntry = config.NewToken{
	Name:   "carol",
	SHA256: "c9ac1c05e51ff9cd4a2d2b4bbdd3c2e3e1d1b0b6a0a4c1e6b40b0e1ad7d1c2f3",
	Models: []string{"claude-*", "gpt-5"},
}

// TestAddTokenLayouts runs testdata/tokensnew/*.txt: each holds the input
// file and the exact line diff the edit must make ("+N:" is line N of the
// output, "-N:" line N of the input); "-- reformatted --" marks the cases
// that cannot be edited in place, "-- no newline at end --" an input whose
// last line has no newline.
func TestAddTokenLayouts(t *testing.T) {
	files, _ := filepath.Glob("testdata/tokensnew/*.txt")
	if len(files) < 10 {
		t.Fatalf("only %d cases", len(files))
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			sec := sections(string(raw))
			in := strings.ReplaceAll(sec["in.yaml"], `\r`, "\r")
			if _, ok := sec["no newline at end"]; ok {
				in = strings.TrimSuffix(in, "\n")
			}
			out, reformatted, err := config.AddToken([]byte(in), testEntry)
			if err != nil {
				t.Fatal(err)
			}
			got := lineDiff(in, string(out))
			if *update {
				rewriteSection(t, file, string(raw), "want.diff", got)
				return
			}
			if got != sec["want.diff"] {
				t.Errorf("diff:\n%s\nwant:\n%s\noutput:\n%s", got, sec["want.diff"], out)
			}
			if _, want := sec["reformatted"]; reformatted != want {
				t.Errorf("reformatted = %v, want %v", reformatted, want)
			}
			// Adding a second token works on the result too.
			again := testEntry
			again.Name, again.Models = "dave", nil
			if _, _, err := config.AddToken(out, again); err != nil {
				t.Errorf("second add: %v", err)
			}
			if _, _, err := config.AddToken(out, testEntry); err == nil || !strings.Contains(err.Error(), `a token named "carol" exists already`) {
				t.Errorf("duplicate name: %v", err)
			}
		})
	}
}

// sections splits "-- name --" sections; the text before the first is the
// description.
func sections(s string) map[string]string {
	out := map[string]string{}
	name := ""
	for _, l := range strings.SplitAfter(s, "\n") {
		if strings.HasPrefix(l, "-- ") && strings.HasSuffix(strings.TrimSpace(l), " --") {
			name = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(l), "-- "), " --")
			out[name] = ""
			continue
		}
		if name != "" {
			out[name] += l
		}
	}
	return out
}

func rewriteSection(t *testing.T, file, raw, name, body string) {
	start := strings.Index(raw, "-- "+name+" --\n")
	if start < 0 {
		t.Fatalf("%s: no section %s", file, name)
	}
	start += len("-- " + name + " --\n")
	end := strings.Index(raw[start:], "\n-- ")
	rest := ""
	if end >= 0 {
		rest = raw[start+end+1:]
	}
	os.WriteFile(file, []byte(raw[:start]+body+rest), 0o644)
}

// lineDiff lists the lines removed from a and added in b, by a longest
// common subsequence; "\r" shows as \r and a last line without a newline is
// marked.
func lineDiff(a, b string) string {
	split := func(s string) []string {
		var out []string
		for _, l := range strings.SplitAfter(s, "\n") {
			if l == "" {
				continue
			}
			if !strings.HasSuffix(l, "\n") {
				l += " (no newline at end)"
			}
			out = append(out, strings.ReplaceAll(strings.TrimSuffix(l, "\n"), "\r", `\r`))
		}
		return out
	}
	x, y := split(a), split(b)
	lcs := make([][]int, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			i++
			j++
		case i < len(x) && (j == len(y) || lcs[i+1][j] >= lcs[i][j+1]):
			fmt.Fprintf(&out, "-%d: %s\n", i+1, x[i])
			i++
		default:
			fmt.Fprintf(&out, "+%d: %s\n", j+1, y[j])
			j++
		}
	}
	return out.String()
}

// TestTokensNewRun edits a copy of ccload.example.yaml: the token is printed
// once, only its hash is written, the file still validates and the new
// token is in it, and the rest of the file is untouched.
func TestTokensNewRun(t *testing.T) {
	src, err := os.ReadFile("../ccload.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "ccload.yaml")
	os.WriteFile(file, src, 0o640)
	io, out, errb := testIO()
	rnd := bytes.NewReader(bytes.Repeat([]byte{255, 7, 0, 61, 62, 247, 248}, 100))
	err = tokensNewRun(&TokensNewOptions{IO: io, Config: file, Name: "carol", Models: []string{"claude-*"}, Rand: rnd})
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(out.String())
	if !regexp.MustCompile(`^sk-ccload-[0-9A-Za-z]{32}$`).MatchString(token) || strings.Count(out.String(), "\n") != 1 {
		t.Fatalf("stdout %q", out)
	}
	if token != "sk-ccload-"+strings.Repeat("70z0z", 7)[:32] {
		t.Errorf("token %q: bytes >= 248 must be skipped, the rest taken mod 62", token)
	}
	if !strings.Contains(errb.String(), `added token "carol"`) || strings.Contains(errb.String(), token) {
		t.Errorf("stderr %q", errb)
	}
	edited, _ := os.ReadFile(file)
	if bytes.Contains(edited, []byte(token)) {
		t.Fatal("the token itself was written to the file")
	}
	if st, _ := os.Stat(file); st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640 kept", st.Mode().Perm())
	}
	diff := lineDiff(string(src), string(edited))
	if n := strings.Count(diff, "\n"); n != 3 || strings.Contains(diff, "\n-") || strings.HasPrefix(diff, "-") {
		t.Errorf("diff is more than the three added lines:\n%s", diff)
	}
	snap, err := config.Parse(file, edited, config.Env{})
	if err != nil {
		t.Fatalf("edited file does not validate: %v", err)
	}
	sum := sha256.Sum256([]byte(token))
	if tk := snap.TokenBySHA256(hex.EncodeToString(sum[:])); tk == nil || tk.Name != "carol" || len(tk.Models) != 1 {
		t.Fatalf("token not found in the edited config: %+v", tk)
	}

	io, _, _ = testIO()
	err = tokensNewRun(&TokensNewOptions{IO: io, Config: file, Name: "demo"})
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitFail || !strings.Contains(err.Error(), `"demo" exists already`) {
		t.Fatalf("duplicate: %v", err)
	}
	err = tokensNewRun(&TokensNewOptions{IO: io, Config: file, Name: "x", Models: []string{"[bad"}})
	if !errors.As(err, &ee) || ee.code != exitUsage {
		t.Fatalf("bad glob: %v", err)
	}
}

func TestTokensFlags(t *testing.T) {
	var got *TokensNewOptions
	root := NewCmdTokens(&Factory{}, nil)
	for _, c := range root.Commands() {
		if c.Name() == "new" {
			root.RemoveCommand(c)
		}
	}
	root.AddCommand(NewCmdTokensNew(&Factory{}, func(o *TokensNewOptions) error { got = o; return nil }))
	root.SetArgs(strings.Fields("new alice --models claude-*,gpt-5* -c /etc/ccload.yaml"))
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Name != "alice" || got.Config != "/etc/ccload.yaml" || strings.Join(got.Models, " ") != "claude-* gpt-5*" {
		t.Fatalf("opts %+v", got)
	}

	var list *TokensOptions
	c := NewCmdTokens(&Factory{}, func(o *TokensOptions) error { list = o; return nil })
	c.SetArgs(strings.Fields("--json --server http://h:1"))
	if err := c.Execute(); err != nil || !list.JSON || list.Admin.Server != "http://h:1" {
		t.Fatalf("tokens flags: %+v %v", list, err)
	}
}
