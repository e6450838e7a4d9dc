package protocol

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func TestReaderSplitsEvents(t *testing.T) {
	in := ": keep-alive\n\nevent: message_start\ndata: {\"a\":1}\n\n" +
		"data: line1\r\ndata: line2\r\n\r\n" +
		"event: ping\ndata: {}\n\n" +
		"data: [DONE]\n\n" +
		"data: tail-without-blank"
	r := NewReader(strings.NewReader(in), 0)
	type got struct{ name, data, raw string }
	want := []got{
		{"message_start", `{"a":1}`, "event: message_start\ndata: {\"a\":1}\n\n"},
		{"", "line1\nline2", "data: line1\r\ndata: line2\r\n\r\n"},
		{"ping", "{}", "event: ping\ndata: {}\n\n"},
		{"", "[DONE]", "data: [DONE]\n\n"},
		{"", "tail-without-blank", "data: tail-without-blank"},
	}
	for i, w := range want {
		ev, err := r.Next()
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		g := got{string(ev.Name), string(ev.Data), string(ev.Raw)}
		if g != w {
			t.Fatalf("event %d = %+v, want %+v", i, g, w)
		}
		if (w.data == "[DONE]") != ev.IsDone() {
			t.Fatalf("event %d IsDone = %v", i, ev.IsDone())
		}
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("after last event: %v, want EOF", err)
	}
}

func TestReaderBoundsEventSize(t *testing.T) {
	huge := "data: " + strings.Repeat("x", 200<<10) + "\n\n"
	r := NewReader(strings.NewReader(huge), 64<<10)
	if _, err := r.Next(); !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("got %v, want ErrEventTooLarge", err)
	}
	// A long line under the limit is fine.
	r = NewReader(strings.NewReader(huge), 0)
	ev, err := r.Next()
	if err != nil || len(ev.Data) != 200<<10 {
		t.Fatalf("long line: err=%v len=%d", err, len(ev.Data))
	}
}

func FuzzReader(f *testing.F) {
	f.Add([]byte("event: a\ndata: b\n\ndata: c\r\n\r\n: x\n"))
	f.Add([]byte("data:\ndata:\n\n\r\r\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		r := NewReader(strings.NewReader(string(in)), 1<<10)
		total := 0
		for {
			ev, err := r.Next()
			if err != nil {
				return
			}
			total += len(ev.Raw)
			if len(ev.Raw) > 1<<10 || total > len(in) {
				t.Fatalf("event raw %d bytes, total %d of %d input", len(ev.Raw), total, len(in))
			}
		}
	})
}

// The buffer size changes only how lines are gathered, never the events:
// a 16-byte buffer (every line longer than it) and a 10 KB event longer
// than the default buffer give what a buffer larger than the stream gives.
func TestReaderBufferSizeDoesNotChangeEvents(t *testing.T) {
	long := strings.Repeat("x", 10<<10)
	in := "event: message_start\ndata: {\"a\":1}\n\n" +
		"event: content_block_delta\ndata: {\"text\":\"" + long + "\"}\r\n\r\n" +
		": comment\n\ndata: a\ndata: b\n\n" + "data: [DONE]\n\n"
	read := func(r *Reader) []string {
		var out []string
		for {
			ev, err := r.Next()
			if err == io.EOF {
				return out
			}
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, string(ev.Name)+"|"+string(ev.Data)+"|"+string(ev.Raw))
		}
	}
	want := read(NewReaderSize(strings.NewReader(in), 0, len(in)))
	if len(want) != 4 {
		t.Fatalf("%d events, want 4", len(want))
	}
	for _, size := range []int{16, 100, readBuffer} {
		got := read(NewReaderSize(strings.NewReader(in), 0, size))
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("buffer %d: events differ", size)
		}
	}
}
