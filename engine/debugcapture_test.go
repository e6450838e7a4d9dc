package engine

import (
	"io"
	"strings"
	"testing"

	"github.com/ccload/ccload/engine/failure"
)

func TestMaskCredential(t *testing.T) {
	for in, want := range map[string]string{
		"Bearer sk-upstream-secret-key-0001": "Bearer sk-u…0001",
		"sk-upstream-secret-key-0001":        "sk-u…0001",
		"session=abcdefghijklmnop; path=/":   "sess…th=/",
		"short":                              "…rt",
	} {
		if got := maskCredential(in); got != want {
			t.Errorf("maskCredential(%q) = %q, want %q", in, got, want)
		}
	}
	for name, want := range map[string]bool{
		"Authorization": true, "x-api-key": true, "X-Goog-Api-Key": true, "Set-Cookie": true,
		"X-Relay-Auth": true, "X-Upstream-Token": true, "Content-Type": false, "anthropic-version": false,
	} {
		if got := credentialHeader(name); got != want {
			t.Errorf("credentialHeader(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestDebugBody checks the cut: at max bytes, never inside a UTF-8
// sequence, base64 for binary bodies, secrets scrubbed.
func TestDebugBody(t *testing.T) {
	x := &debugExchange{red: failure.NewRedactor([]string{"sk-channel-key-123456"}), secrets: []string{"sk-client-token-987654"}}
	d := x.body([]byte("key sk-channel-key-123456 token sk-client-token-987654"), 53, 100)
	if d.Truncated || d.Base64 || strings.Contains(d.Body, "123456") || strings.Contains(d.Body, "987654") {
		t.Errorf("scrubbed body = %+v", d)
	}
	d = x.body([]byte("aé"), 3, 2) // é is two bytes: the cut falls inside it
	if d.Body != "a" || !d.Truncated || d.Base64 || d.Size != 3 {
		t.Errorf("cut inside a rune: %+v", d)
	}
	d = x.body([]byte{0xff, 0xfe, 0x00, 0x01}, 4, 10)
	if !d.Base64 || d.Body != "//4AAQ==" || d.Truncated {
		t.Errorf("binary body: %+v", d)
	}
	var c cappedBuffer
	c.max = 5
	c.write([]byte("abc"))
	c.write([]byte("defgh"))
	if string(c.buf) != "abcde" || c.seen != 8 {
		t.Errorf("cappedBuffer kept %q of %d", c.buf, c.seen)
	}
}

// BenchmarkTeeBody measures what a debug capture adds to reading a stream
// in 4 KiB reads: the copy into the capped buffer (until full) and a lock
// per read. Compare with the plain sub-benchmark.
func BenchmarkTeeBody(b *testing.B) {
	chunk := strings.Repeat("data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\n", 64)
	run := func(b *testing.B, wrap func(io.ReadCloser) io.ReadCloser) {
		buf := make([]byte, 4<<10)
		stream := strings.Repeat(chunk, 256)
		src := strings.NewReader(stream)
		b.SetBytes(int64(len(stream)))
		for b.Loop() {
			src.Reset(stream)
			rd := wrap(io.NopCloser(src))
			for {
				if _, err := rd.Read(buf); err != nil {
					break
				}
			}
		}
	}
	b.Run("plain", func(b *testing.B) { run(b, func(r io.ReadCloser) io.ReadCloser { return r }) })
	b.Run("captured_64KiB", func(b *testing.B) {
		run(b, func(r io.ReadCloser) io.ReadCloser {
			return &teeBody{ReadCloser: r, resp: &debugResponse{body: &cappedBuffer{max: 64 << 10}}}
		})
	})
}
