package mockupstream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// start runs a mock on a free loopback port for the length of the test.
func start(t *testing.T, opts Options) (*Server, string) {
	t.Helper()
	s := New(opts)
	base, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s, base
}

// script returns Options whose Script always answers rep.
func script(rep Reply) Options {
	return Options{Script: func(*Recorded) Reply { return rep }}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// post sends a raw request; headers are "Name: value" strings.
func post(t *testing.T, url, body string, headers ...string) *http.Response {
	t.Helper()
	return postCtx(t, testCtx(t), url, body, headers...)
}

func postCtx(t *testing.T, ctx context.Context, url, body string, headers ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ":")
		req.Header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func readAll(t *testing.T, r io.Reader) []byte {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sseBlocks splits a stream body into its event blocks (CRLF or LF framed).
func sseBlocks(body []byte) []string {
	body = bytes.ReplaceAll(body, []byte("\r\n"), []byte("\n"))
	var out []string
	for _, b := range strings.Split(string(body), "\n\n") {
		if strings.TrimSpace(b) != "" {
			out = append(out, b)
		}
	}
	return out
}

// sseData returns the data of one event block.
func sseData(block string) string {
	for line := range strings.SplitSeq(block, "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			return d
		}
	}
	return ""
}

// readBlock reads one event block from a stream.
func readBlock(br *bufio.Reader) (string, error) {
	var b strings.Builder
	for {
		line, err := br.ReadString('\n')
		b.WriteString(line)
		if err != nil {
			return b.String(), err
		}
		if strings.TrimRight(line, "\r\n") == "" && strings.TrimSpace(b.String()) != "" {
			return b.String(), nil
		}
	}
}

// jsonEqual compares two JSON texts structurally.
func jsonEqual(t *testing.T, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("got is not JSON: %v: %s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want is not JSON: %v: %s", err, want)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if !bytes.Equal(gb, wb) {
		t.Errorf("JSON differs\n got: %s\nwant: %s", gb, wb)
	}
}
