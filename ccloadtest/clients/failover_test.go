//go:build clients

package clients

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
)

// A real agent's thinking tool turn that fails over mid-loop to a channel
// of another family (docs/reasoning.md): the first channel answers the
// call with signed reasoning, then fails; the tool result goes to the
// second, which signs its own and refuses any other signature with the
// provider's 400, as the providers do. The CLI must finish the turn.
func TestClientsFailover(t *testing.T) {
	dir := os.Getenv("CCLOAD_CLIENTS_DIR")
	if dir == "" {
		t.Fatal("CCLOAD_CLIENTS_DIR is not set: run `make test-clients`, or clients/install.sh and set it to the directory it prints")
	}
	bin := buildCcload(t)
	cases := []struct {
		client   *client
		from, to string
	}{
		{clientNamed("claude-code"), mockupstream.Anthropic, mockupstream.Gemini},
		{clientNamed("codex"), mockupstream.Responses, mockupstream.Anthropic},
		{clientNamed("gemini-cli"), mockupstream.Gemini, mockupstream.Responses},
	}
	for _, c := range cases {
		t.Run(c.client.name+"/"+c.from+"-then-"+c.to, func(t *testing.T) {
			t.Parallel()
			var down atomic.Bool
			// The first channel answers until the loop's tool result comes:
			// it fails from then on.
			first := startSigning(t, "provider-a", func(body []byte) bool {
				if hasToolResult(body) {
					down.Store(true)
				}
				return down.Load()
			})
			second := startSigning(t, "provider-b", func([]byte) bool { return false })
			base := failoverServe(t, bin, first.url, c.from, second.url, c.to)
			nonce := newNonce(t)
			out := c.client.run(t, dir, base, clientToken("failover"),
				"Run the shell command for ccload-shell-"+nonce+" and report what it printed.", true)
			want := mockupstream.ShellSawPrefix + mockupstream.ShellOutputPrefix + nonce
			ra, rb := requestsWith(first.mock, nonce), requestsWith(second.mock, nonce)
			if out.err != nil || !strings.Contains(out.stdout, want) || len(ra) == 0 || len(rb) == 0 {
				t.Fatalf("exit %v; stdout lacks %q or a channel saw nothing (first %d, second %d)\nstdout:\n%s\nstderr:\n%s",
					out.err, want, len(ra), len(rb), tail(out.stdout, 20), tail(out.stderr, 30))
			}
			failed := false
			for _, q := range ra {
				failed = failed || hasToolResult(q.Body)
			}
			if !failed {
				t.Errorf("the first channel never saw the tool result: no failover mid-loop (%s)", paths(ra))
			}
			for _, q := range rb {
				for _, sig := range bodySignatures(c.to, q.Body) {
					if !mockupstream.SignedBy(sig, c.to, "provider-b") {
						t.Errorf("the second channel was sent a signature it did not mint: %.60s…", sig)
					}
				}
			}
		})
	}
}

func clientNamed(name string) *client {
	for _, c := range clients {
		if c.name == name {
			return c
		}
	}
	panic("no client " + name)
}

type signingMock struct {
	mock *mockupstream.Server
	url  string
}

// startSigning starts a mock that signs its reasoning (Options.Signer),
// thinks before each answer of the "shell" scenario, and answers 500 when
// fail says so.
func startSigning(t *testing.T, signer string, fail func(body []byte) bool) *signingMock {
	m := mockupstream.New(mockupstream.Options{Signer: signer, Script: func(r *mockupstream.Recorded) mockupstream.Reply {
		if strings.Contains(string(r.Body), "ccload-shell-") && fail(r.Body) {
			return mockupstream.Reply{Status: 500, Text: "down for the failover test"}
		}
		r.Header.Set(mockupstream.ScenarioHeader, "shell")
		rep := mockupstream.DefaultReply(r)
		rep.Thinking = "Thinking at " + signer + "."
		return rep
	}})
	u, err := m.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return &signingMock{mock: m, url: u}
}

// failoverServe runs ccload with channel first (family from, priority 10)
// and second (family to, priority 5) serving every model, and a token for
// both.
func failoverServe(t *testing.T, bin, urlA, from, urlB, to string) string {
	dir := t.TempDir()
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "version: 1\nserver: {listen: \"127.0.0.1:0\", admin_password: clients-test}\n")
	fmt.Fprintf(&cfg, "storage: {driver: sqlite, dsn: %q}\n", filepath.Join(dir, "ccload.db"))
	fmt.Fprintf(&cfg, "routing: {max_attempts: 3, health_score: {enabled: false}}\nchannels:\n")
	for _, ch := range []struct {
		name, url, fam string
		prio           int
	}{{"first", urlA, from, 10}, {"second", urlB, to, 5}} {
		fmt.Fprintf(&cfg, "  - name: %s\n    priority: %d\n    urls: [{url: %q, protocols: [%s]}]\n    keys: [%s]\n    models: [%s]\n",
			ch.name, ch.prio, ch.url, ch.fam, upstreamKey(ch.fam), strings.Join(models, ", "))
	}
	sum := sha256.Sum256([]byte(clientToken("failover")))
	fmt.Fprintf(&cfg, "tokens:\n  - {name: failover, token_sha256: %s}\n", hex.EncodeToString(sum[:]))
	file := filepath.Join(dir, "ccload.yaml")
	if err := os.WriteFile(file, []byte(cfg.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return "http://" + startServe(t, bin, file, filepath.Join(dir, "serve.log"))
}

// hasToolResult reports whether a request body carries a tool result in
// any family's shape.
func hasToolResult(body []byte) bool {
	for _, k := range []string{`"tool_result"`, `"function_call_output"`, `"custom_tool_call_output"`, `"functionResponse"`} {
		if strings.Contains(string(body), k) {
			return true
		}
	}
	return false
}

// bodySignatures lists the reasoning signatures of a request body.
func bodySignatures(family string, body []byte) []string {
	path := map[string]string{
		mockupstream.Anthropic: `messages.#.content.#(type=="thinking")#.signature|@flatten`,
		mockupstream.Responses: `input.#(type=="reasoning")#.encrypted_content`,
		mockupstream.Gemini:    `contents.#.parts.#.thoughtSignature|@flatten`,
	}[family]
	var sigs []string
	for _, v := range gjson.GetBytes(body, path).Array() {
		if v.Str != "" && v.Str != "skip_thought_signature_validator" {
			sigs = append(sigs, v.Str)
		}
	}
	return sigs
}
