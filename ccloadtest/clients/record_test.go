//go:build clients

package clients

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
)

// realDir holds the request bodies the CLIs really send, as golden inputs
// for the converters (protocol/convert/testdata/real/README.md).
const realDir = "../../protocol/convert/testdata/real"

// native is the family each client speaks itself: on that channel the mock
// sees the CLI's own request body, untouched by a conversion.
var native = map[string]string{
	"claude-code": mockupstream.Anthropic, "codex": mockupstream.Responses,
	"codex-code-mode": mockupstream.Responses, "gemini-cli": mockupstream.Gemini,
}

// recorder writes the native tool-turn requests of each client when
// CCLOAD_CLIENTS_RECORD=1.
type recorder struct {
	on bool
	mu sync.Mutex
	t  *testing.T
}

func newRecorder(t *testing.T) *recorder {
	on := os.Getenv("CCLOAD_CLIENTS_RECORD") == "1"
	if on {
		if err := os.MkdirAll(realDir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return &recorder{on: on, t: t}
}

// keep writes the requests of a native tool turn as
// <client>-tool-<n>.json, in the order the mock received them.
func (r *recorder) keep(c cell, reqs []mockupstream.Recorded) {
	if !r.on || !c.tool || native[c.client.name] != c.family {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, q := range reqs {
		body := scrub(q.Body, nonceOf(q.Body))
		var buf bytes.Buffer
		if err := json.Indent(&buf, body, "", "  "); err != nil {
			r.t.Errorf("recording %s: body is not JSON: %v", c.client.name, err)
			return
		}
		buf.WriteByte('\n')
		name := fmt.Sprintf("%s-tool-%d.json", c.client.name, i+1)
		if err := os.WriteFile(filepath.Join(realDir, name), buf.Bytes(), 0o644); err != nil {
			r.t.Errorf("recording: %v", err)
		}
	}
}

var (
	nonceRe   = regexp.MustCompile(`ccload-(?:shell|text)-([0-9a-f]{12})`)
	uuidRe    = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	hex64Re   = regexp.MustCompile(`\b[0-9a-f]{64}\b`)
	tempDirRe = regexp.MustCompile(`(?:/[^/"\\\s]+)*/TestClients[^/"\\\s]*/[0-9]+`)
	// Claude Code names its project dir after the path, "/" as "-".
	mangledRe = regexp.MustCompile(`-tmp-TestClients[^/"\\\s]*?[0-9]+-[0-9]{3}`)
	msTimeRe  = regexp.MustCompile(`(unix_ms\\?"\s*:\s*)[0-9]+`)
)

func nonceOf(body []byte) string {
	if m := nonceRe.FindSubmatch(body); m != nil {
		return string(m[1])
	}
	return ""
}

// scrub replaces what identifies the run or the machine: the nonce, ids
// (UUIDs, 64-hex device ids), the temp home, millisecond timestamps.
func scrub(body []byte, nonce string) []byte {
	s := string(body)
	if nonce != "" {
		s = strings.ReplaceAll(s, nonce, "0123456789ab")
	}
	s = uuidRe.ReplaceAllString(s, "00000000-0000-0000-0000-000000000000")
	s = hex64Re.ReplaceAllString(s, strings.Repeat("0", 64))
	s = tempDirRe.ReplaceAllString(s, "/home/ccload")
	s = mangledRe.ReplaceAllString(s, "-home-ccload")
	s = msTimeRe.ReplaceAllString(s, "${1}0")
	return []byte(s)
}
