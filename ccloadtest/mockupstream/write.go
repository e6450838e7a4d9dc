package mockupstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// jsonOf encodes one of this package's response values. They hold only
// strings, numbers, booleans, slices and validated json.RawMessage, so an
// encoding error is a bug in this package, not an input problem: it panics,
// and net/http turns the panic into a closed connection for that request.
func jsonOf(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // the real APIs send <, > and & unescaped
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("mockupstream: encoding %T: %v", v, err))
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// sseEvent frames one event the way Anthropic and OpenAI do: an optional
// "event:" line, one "data:" line, a blank line.
func sseEvent(name string, data []byte) []byte {
	b := make([]byte, 0, len(name)+len(data)+16)
	if name != "" {
		b = append(b, "event: "...)
		b = append(b, name...)
		b = append(b, '\n')
	}
	b = append(b, "data: "...)
	b = append(b, data...)
	return append(b, "\n\n"...)
}

// geminiEvent frames one Gemini stream chunk: Google's servers end SSE lines
// with CRLF.
func geminiEvent(data []byte) []byte {
	b := make([]byte, 0, len(data)+10)
	b = append(b, "data: "...)
	b = append(b, data...)
	return append(b, "\r\n\r\n"...)
}

// rawEventBlock returns a scripted event block, ended by a blank line
// unless it already is.
func rawEventBlock(s string) []byte {
	if strings.HasSuffix(s, "\n\n") || strings.HasSuffix(s, "\r\n\r\n") {
		return []byte(s)
	}
	if strings.HasSuffix(s, "\n") {
		return []byte(s + "\n")
	}
	return []byte(s + "\n\n")
}

// wait sleeps for d unless ctx ends first; it reports whether to go on.
func wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// writeHeader applies the reply's headers and a default Content-Type, then
// sends the status line.
func writeHeader(w http.ResponseWriter, rep *Reply, contentType string) {
	h := w.Header()
	if contentType == "text/event-stream" {
		h.Set("Cache-Control", "no-cache")
	}
	h.Set("Content-Type", contentType)
	for k, v := range rep.Header {
		h.Set(k, v)
	}
	status := rep.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
}

// writeBody writes a whole non-stream body, or half of it before a cut.
func writeBody(w http.ResponseWriter, rep *Reply, contentType string, body []byte) {
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	writeHeader(w, rep, contentType)
	if rep.CutAfterEvents > 0 {
		_, err := w.Write(body[:len(body)/2])
		if err == nil {
			err = http.NewResponseController(w).Flush()
		}
		if err == nil { // a failed write already lost the client
			abort(w, false)
		}
		return
	}
	_, _ = w.Write(body) // an error means the client left; nothing to tell it
}

// writeStream sends events one at a time, flushing each so that a client
// (or a gateway in between) can see it before the next is written. It stops
// on the first write error: the client is gone.
func writeStream(ctx context.Context, w http.ResponseWriter, rep *Reply, events [][]byte) {
	writeHeader(w, rep, "text/event-stream")
	rc := http.NewResponseController(w)
	for i, ev := range events {
		if i > 0 && !wait(ctx, rep.EventDelay) {
			return
		}
		if _, err := w.Write(ev); err != nil {
			return
		}
		if err := rc.Flush(); err != nil {
			return
		}
		if rep.CutAfterEvents > 0 && i+1 == rep.CutAfterEvents {
			abort(w, false)
			return
		}
	}
	if len(events) == 0 {
		_ = rc.Flush() // at least the status line; an error means the client left
	}
}

// abort closes the client connection without finishing the response: the
// client sees a truncated body (or, with reset, a connection reset before
// any byte). Where the connection cannot be taken over (HTTP/2, recorders)
// it falls back to http.ErrAbortHandler, which net/http turns into the
// same abrupt end.
func abort(w http.ResponseWriter, reset bool) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok && reset {
		// SO_LINGER 0 sends RST instead of FIN: "connection reset by peer".
		_ = tc.SetLinger(0) // best effort: a plain close still ends the exchange
	}
	_ = conn.Close() // the connection is being thrown away on purpose
}
