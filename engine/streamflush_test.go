package engine_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestStreamEventNotHeldForTheNext: the relay gathers the events of one
// upstream read into one write, but never keeps an event back waiting for
// the upstream's next one. The upstream here sends its first text delta
// and then waits until the client has seen it; a relay that held the
// delta until more arrived would leave both sides waiting. Native
// (Anthropic to Anthropic) and converted (Anthropic to OpenAI Chat).
func TestStreamEventNotHeldForTheNext(t *testing.T) {
	for _, tc := range []struct {
		name, path, body string
	}{
		{"native", "/v1/messages", `{"model":"m1","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"hi"}]}`},
		{"converted", "/v1/chat/completions", `{"model":"m1","stream":true,"messages":[{"role":"user","content":"hi"}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			release := make(chan struct{})
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				fl := w.(http.Flusher)
				io.WriteString(w, sseMessageStart+
					sseBlockStart+
					sseTextDelta("zeroword "))
				fl.Flush()
				// The peek ends at the first delta and writes it; the
				// second goes through the relay loop.
				time.Sleep(50 * time.Millisecond)
				io.WriteString(w, sseTextDelta("firstword"))
				fl.Flush()
				select {
				case <-release:
				case <-time.After(10 * time.Second):
				case <-r.Context().Done():
					return
				}
				io.WriteString(w, sseTextDelta("secondword")+
					sseBlockStop+
					sseMessageDelta(2)+
					sseMessageStop)
				fl.Flush()
			}))
			defer up.Close()
			g := gatewayBefore(t, up.URL)
			resp, err := openStream(g.URL+tc.path, tc.body)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			lines := make(chan string)
			go func() {
				defer close(lines)
				br := bufio.NewReader(resp.Body)
				for {
					l, err := br.ReadString('\n')
					if err != nil {
						return
					}
					lines <- l
				}
			}()
			seen := func(word string, within time.Duration) bool {
				deadline := time.After(within)
				for {
					select {
					case l, ok := <-lines:
						if !ok {
							return false
						}
						if strings.Contains(l, word) {
							return true
						}
					case <-deadline:
						return false
					}
				}
			}
			if !seen("firstword", 5*time.Second) {
				t.Fatal("the first delta did not reach the client while the upstream waited for it to")
			}
			close(release)
			if !seen("secondword", 5*time.Second) {
				t.Fatal("the rest of the stream did not arrive")
			}
		})
	}
}

// TestStreamEventsThatArriveTogetherGoOutTogether: events the upstream
// sent in one burst reach the client in a few writes, not one write per
// event. The upstream here writes 40 events, each its own HTTP chunk, in
// one write of its socket; the gateway frames each of its writes as one
// chunk, so the chunks the client counts are the gateway's writes. A
// relay that flushed before every read of the body (one HTTP chunk, one
// event) made 40 of them.
func TestStreamEventsThatArriveTogetherGoOutTogether(t *testing.T) {
	const events = 40
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		req, err := http.ReadRequest(bufio.NewReader(c))
		if err != nil {
			return
		}
		io.Copy(io.Discard, req.Body)
		var b strings.Builder
		b.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
		chunk := func(ev string) { fmt.Fprintf(&b, "%x\r\n%s\r\n", len(ev), ev) }
		chunk(sseMessageStart)
		chunk(sseBlockStart)
		for i := range events {
			chunk(sseTextDelta(fmt.Sprintf("w%d ", i)))
		}
		chunk(sseBlockStop)
		chunk(sseMessageDelta(41))
		chunk(sseMessageStop)
		b.WriteString("0\r\n\r\n")
		io.WriteString(c, b.String()) // one write: the events arrive together
		io.Copy(io.Discard, c)        // keep the connection until the gateway closes it
	}()
	g := gatewayBefore(t, "http://"+ln.Addr().String())

	conn, err := net.Dial("tcp", strings.TrimPrefix(g.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"model":"m1","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"}]}`
	fmt.Fprintf(conn, "POST /v1/messages HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", testToken, len(body), body)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || len(resp.TransferEncoding) == 0 {
		t.Fatalf("status %d, transfer encoding %v", resp.StatusCode, resp.TransferEncoding)
	}
	// Count the chunks by hand (resp.Body would hide them).
	chunks, text := 0, ""
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("after %d chunks: %v", chunks, err)
		}
		n, err := strconv.ParseInt(strings.TrimSpace(line), 16, 64)
		if err != nil {
			t.Fatalf("chunk size %q: %v", line, err)
		}
		if n == 0 {
			break
		}
		data := make([]byte, n+2)
		if _, err := io.ReadFull(br, data); err != nil {
			t.Fatal(err)
		}
		chunks++
		text += string(data[:n])
	}
	if !strings.Contains(text, fmt.Sprintf("w%d ", events-1)) || !strings.Contains(text, "message_stop") {
		t.Fatalf("the stream did not arrive whole:\n%s", text)
	}
	if chunks > 8 {
		t.Errorf("%d events that arrived together went out in %d writes; want a few", events+5, chunks)
	}
}

// TestOpenStreamsDoNotKeepTheClientBody: once a stream is committed
// nothing reads the client's request again, and an agent's body is
// hundreds of KB held for the minutes a stream lasts. 16 streams with a
// 512 KB body each are held open, native and converted (Responses client,
// Anthropic upstream, with namespace tools whose names the converter
// keeps); the live heap must not hold their bodies.
func TestOpenStreamsDoNotKeepTheClientBody(t *testing.T) {
	const streams, bodySize = 16, 512 << 10
	release := make(chan struct{})
	var started sync.WaitGroup
	started.Add(streams)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, sseMessageStart+
			sseBlockStart+
			sseTextDelta("hello "))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, sseBlockStop+
			sseMessageDelta(2)+
			sseMessageStop)
	}))
	defer up.Close()
	// Runs before up.Close: a test that fails before releasing the
	// streams must not leave Close waiting for their handlers.
	var releaseOnce sync.Once
	free := func() { releaseOnce.Do(func() { close(release) }) }
	defer free()
	g := gatewayBefore(t, up.URL)

	filler := strings.Repeat("x", bodySize)
	bodies := []string{
		`{"model":"m1","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"` + filler + `"}]}`,
		`{"model":"m1","stream":true,"input":"` + filler + `","tools":[{"type":"namespace","name":"ns","tools":[{"type":"function","name":"look","parameters":{"type":"object"}}]}]}`,
	}
	paths := []string{"/v1/messages", "/v1/responses"}

	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var done sync.WaitGroup
	errs := make(chan error, streams)
	for i := range streams {
		done.Add(1)
		go func() {
			defer done.Done()
			resp, err := openStream(g.URL+paths[i%2], bodies[i%2])
			if err != nil {
				errs <- err
				started.Done()
				return
			}
			defer resp.Body.Close()
			br := bufio.NewReader(resp.Body)
			for {
				l, err := br.ReadString('\n')
				if err != nil {
					errs <- fmt.Errorf("stream %d ended before its first text: %v", i, err)
					started.Done()
					return
				}
				if strings.Contains(l, "hello") {
					break
				}
			}
			started.Done()
			io.Copy(io.Discard, br)
		}()
	}
	started.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	// Every stream is open and past its first text. The request bodies are
	// gone from the client by now (sent); what is live beyond the small
	// state of each stream would be the gateway's copies.
	var open runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&open)
	free()
	done.Wait()
	grown := int64(open.HeapAlloc) - int64(before.HeapAlloc)
	if limit := int64(streams * bodySize / 4); grown > limit {
		t.Errorf("live heap grew %d KiB with %d streams open (bodies of %d KiB each); want under %d KiB: the streams keep their request bodies",
			grown>>10, streams, bodySize>>10, limit>>10)
	}
	t.Logf("live heap grew %d KiB with %d streams open", grown>>10, streams)
}

// The Anthropic stream events the tests above send, in order.
const (
	sseMessageStart = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m1\",\"content\":[],\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n"
	sseBlockStart   = "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
	sseBlockStop    = "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
	sseMessageStop  = "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
)

func sseTextDelta(text string) string {
	return `event: content_block_delta` + "\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"` + text + `"}}` + "\n\n"
}

func sseMessageDelta(outputTokens int) string {
	return fmt.Sprintf(`event: message_delta`+"\n"+`data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":%d}}`+"\n\n", outputTokens)
}

// gatewayBefore is a gateway whose model m1 goes to the Anthropic
// upstream at url. Its first-byte timeout is failoverConfig's, raised from
// 400 ms to a minute: these tests measure what the relay holds and
// flushes, not timeouts, and on a loaded machine sixteen half-megabyte
// requests may take longer than 400 ms to reach their first byte (the
// gateway then answers with a timeout error instead of a stream).
func gatewayBefore(t *testing.T, url string) *gateway {
	t.Helper()
	cfg := strings.Replace(failoverConfig, "first_byte: 400ms", "first_byte: 1m", 1)
	if cfg == failoverConfig {
		t.Fatal("failoverConfig no longer sets first_byte: 400ms; update gatewayBefore")
	}
	return startGateway(t, strings.NewReplacer("{{URLA}}", `{url: "`+url+`", protocols: [anthropic]}`, "{{URLB}}", url, "{{FALLBACK}}", "false").Replace(cfg))
}

// openStream posts body to url as a client does and returns the response
// with its body unread (the caller closes it). It takes no *testing.T, so
// that goroutines may call it.
func openStream(url, body string) (*http.Response, error) {
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Content-Type", "application/json")
	return http.DefaultClient.Do(req)
}
