package engine_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
)

func post(t *testing.T, url, body string, header map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestAuthForms(t *testing.T) {
	g, _ := startNative(t)
	anth := `{"model":"claude-client","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`
	gem := `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`
	cases := []struct {
		name, path, body string
		header           map[string]string
		status           int
		contains         string
	}{
		{"bearer", "/v1/messages", anth, map[string]string{"Authorization": "Bearer " + testToken}, 200, mockText},
		{"x-api-key", "/v1/messages", anth, map[string]string{"x-api-key": testToken}, 200, mockText},
		{"x-goog-api-key", "/v1beta/models/gemini-client:generateContent", gem, map[string]string{"x-goog-api-key": testToken}, 200, mockText},
		{"query key", "/v1beta/models/gemini-client:generateContent?key=" + testToken, gem, nil, 200, mockText},
		{"missing anthropic shape", "/v1/messages", anth, nil, 401, `"type":"error","error":{"type":"authentication_error"`},
		{"wrong openai shape", "/v1/chat/completions", `{"model":"gpt-client","messages":[]}`, map[string]string{"Authorization": "Bearer nope"}, 401, `"code":"invalid_api_key"`},
		{"wrong gemini shape", "/v1beta/models/gemini-client:generateContent", gem, map[string]string{"x-goog-api-key": "nope"}, 401, `"status":"UNAUTHENTICATED"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, body := post(t, g.URL+c.path, c.body, c.header)
			if resp.StatusCode != c.status || !strings.Contains(body, c.contains) {
				t.Fatalf("status %d body %s; want %d containing %s", resp.StatusCode, body, c.status, c.contains)
			}
		})
	}
}

func TestBodyLimitAndBadRequests(t *testing.T) {
	g, m := startNative(t)
	auth := map[string]string{"x-api-key": testToken}
	// Announce a body over the 1 MiB limit and send none of it: the server
	// must answer 413 from the headers alone. (Sending the 2 MiB races the
	// server closing the connection, and the client may see only a reset.)
	conn, err := net.Dial("tcp", strings.TrimPrefix(g.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/messages HTTP/1.1\r\nHost: x\r\nx-api-key: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", testToken, 2<<20)
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	big, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	bigBody, _ := io.ReadAll(big.Body)
	if big.StatusCode != 413 || !strings.Contains(string(bigBody), "max_body_bytes") || !strings.Contains(string(bigBody), `"type":"error"`) {
		t.Fatalf("big body: %d %s", big.StatusCode, bigBody)
	}
	var resp *http.Response
	var body string
	resp, body = post(t, g.URL+"/v1/messages", `{"max_tokens":8}`, auth)
	if resp.StatusCode != 400 || !strings.Contains(body, "model") {
		t.Fatalf("no model: %d %s", resp.StatusCode, body)
	}
	resp, body = post(t, g.URL+"/v1/messages", `{"model":"nobody-serves-this","max_tokens":8,"messages":[]}`, auth)
	if resp.StatusCode != 404 || !strings.Contains(body, "nobody-serves-this") {
		t.Fatalf("unknown model: %d %s", resp.StatusCode, body)
	}
	if n := len(m.Requests()); n != 0 {
		t.Fatalf("rejected requests reached the upstream %d times", n)
	}
	// Rejected requests are logged with their reason.
	rows := g.waitLogs(t, 3)
	for _, r := range rows {
		if r.Status < 400 || r.Error == "" {
			t.Errorf("rejected row without status/reason: %+v", r)
		}
	}
}

func TestModelsList(t *testing.T) {
	g, _ := startNative(t)
	get := func(path string, h map[string]string) string {
		req, _ := http.NewRequest("GET", g.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+testToken)
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, b)
		}
		return string(b)
	}
	openaiList := get("/v1/models", nil)
	if !strings.Contains(openaiList, `"object":"list"`) || !strings.Contains(openaiList, `"id":"gpt-client"`) || strings.Contains(openaiList, "upstream") {
		t.Errorf("openai list: %s", openaiList)
	}
	anthList := get("/v1/models", map[string]string{"anthropic-version": "2023-06-01"})
	if !strings.Contains(anthList, `"type":"model","id":"claude-client"`) || !strings.Contains(anthList, `"has_more":false`) {
		t.Errorf("anthropic list: %s", anthList)
	}
	gemList := get("/v1beta/models", nil)
	if !strings.Contains(gemList, `"name":"models/gemini-client"`) {
		t.Errorf("gemini list: %s", gemList)
	}
}

// TestStreamIsNotBuffered: the upstream sends its first content event and
// then waits until the test has read that event through the gateway; a
// gateway that buffered the stream would deadlock here.
func TestStreamIsNotBuffered(t *testing.T) {
	release := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		io.WriteString(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n")
		io.WriteString(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"first\"},\"finish_reason\":null}]}\n\n")
		fl.Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n")
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	defer up.Close()
	defer close(release)
	g := startGateway(t, strings.ReplaceAll(nativeConfig, "{{MOCK}}", up.URL))
	req, _ := http.NewRequest("POST", g.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"gpt-client","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	var seen []string
	for len(seen) < 2 {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("after %q: %v", seen, err)
		}
		if strings.HasPrefix(line, "data: ") {
			seen = append(seen, line)
		}
	}
	if !strings.Contains(seen[1], `"content":"first"`) {
		t.Fatalf("events before the upstream finished: %q", seen)
	}
	release <- struct{}{}
	rest, _ := io.ReadAll(br)
	if !strings.Contains(string(rest), `"finish_reason":"stop"`) || !strings.HasSuffix(string(rest), "data: [DONE]\n\n") {
		t.Fatalf("rest of stream: %q", rest)
	}
}

// TestInvalidReloadKeepsServing: a broken file leaves the old snapshot in
// force and /health shows where the file is wrong.
func TestInvalidReloadKeepsServing(t *testing.T) {
	g, _ := startNative(t)
	g.Engine.SetObserver(func(*fasthttp.RequestCtx) bool { return true }) // the error text is a detail
	before := g.Src.Current()
	if err := os.WriteFile(g.File, []byte("version: 1\nchannels:\n  - name: x\n    prority: 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := g.Src.Reload(); err == nil {
		t.Fatal("reload of an invalid file succeeded")
	}
	if g.Src.Current() != before {
		t.Fatal("invalid file replaced the snapshot")
	}
	resp, body := post(t, g.URL+"/v1/messages", `{"model":"claude-client","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`,
		map[string]string{"x-api-key": testToken})
	if resp.StatusCode != 200 {
		t.Fatalf("after bad reload: %d %s", resp.StatusCode, body)
	}
	hr, err := http.Get(g.URL + "/health")
	if err != nil {
		t.Fatal(err)
	}
	defer hr.Body.Close()
	var h struct {
		Status string `json:"status"`
		Config struct {
			Error *string `json:"error"`
		} `json:"config"`
	}
	if err := json.NewDecoder(hr.Body).Decode(&h); err != nil {
		t.Fatal(err)
	}
	if hr.StatusCode != 200 || h.Status != "ok" || h.Config.Error == nil || !strings.Contains(*h.Config.Error, "ccload.yaml:4:5") {
		t.Fatalf("health = %d %+v (error %v)", hr.StatusCode, h, h.Config.Error)
	}
}

// TestReloadKeepsRuntimeState: a reload that keeps a channel's name keeps
// its URL latency and round-robin state, and serves the new file at once.
func TestReloadKeepsRuntimeState(t *testing.T) {
	g, _ := startNative(t)
	if resp, body := post(t, g.URL+"/v1/messages", `{"model":"claude-client","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`,
		map[string]string{"x-api-key": testToken}); resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	visited := func() bool {
		for _, c := range g.Engine.ChannelStates() {
			if c.Name == "anthropic" {
				return len(c.URLs) == 1 && c.URLs[0].Visited
			}
		}
		return false
	}
	if !visited() {
		t.Fatal("URL latency not recorded")
	}
	b, _ := os.ReadFile(g.File)
	grown := strings.Replace(string(b), "models: [{name: gpt-client, upstream: gpt-upstream}]",
		"models: [{name: gpt-client, upstream: gpt-upstream}, gpt-extra]", 1)
	if err := os.WriteFile(g.File, []byte(grown), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := g.Src.Reload(); err != nil {
		t.Fatal(err)
	}
	if len(g.Src.Current().Routes("gpt-extra")) != 1 {
		t.Fatal("new model not served after reload")
	}
	if !visited() {
		t.Fatal("reload lost the URL latency of an unchanged channel")
	}
}

func TestCountTokensIsLocal(t *testing.T) {
	g, m := startNative(t)
	resp, body := post(t, g.URL+"/v1/messages/count_tokens",
		`{"model":"claude-client","system":"You are a scientist","messages":[{"role":"user","content":"Hello, Claude"}]}`,
		map[string]string{"x-api-key": testToken, "anthropic-version": "2023-06-01"})
	if resp.StatusCode != 200 || !strings.Contains(body, `"input_tokens":14`) {
		t.Fatalf("anthropic: %d %s", resp.StatusCode, body)
	}
	resp, body = post(t, g.URL+"/v1beta/models/gemini-client:countTokens",
		`{"contents":[{"role":"user","parts":[{"text":"The quick brown fox jumps over the lazy dog."}]}]}`,
		map[string]string{"x-goog-api-key": testToken})
	if resp.StatusCode != 200 || !strings.Contains(body, `"totalTokens":`) {
		t.Fatalf("gemini: %d %s", resp.StatusCode, body)
	}
	if n := len(m.Requests()); n != 0 {
		t.Fatalf("count_tokens reached the upstream %d times", n)
	}
}

// TestOverheadHeaderAndRow: a non-stream answer carries the gateway's own
// time in x-ccload-overhead-ms, and the row carries it for /metrics; both
// exclude the upstream's deliberate 300 ms.
func TestOverheadHeaderAndRow(t *testing.T) {
	_, mockURL := startMock(t, mockupstream.Options{Script: func(r *mockupstream.Recorded) mockupstream.Reply {
		rep := mockupstream.DefaultReply(r)
		rep.FirstByteDelay = 300 * time.Millisecond
		return rep
	}})
	g := startGateway(t, strings.ReplaceAll(nativeConfig, "{{MOCK}}", mockURL))
	resp, _ := post(t, g.URL+"/v1/messages", `{"model":"claude-client","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`,
		map[string]string{"x-api-key": testToken})
	h := resp.Header.Get("x-ccload-overhead-ms")
	ms, err := strconv.Atoi(h)
	if err != nil || ms >= 300 {
		t.Fatalf("x-ccload-overhead-ms = %q: it must exclude the upstream's 300 ms", h)
	}
	rows := g.waitLogs(t, 1)
	if rows[0].DurationMs < 300 {
		t.Fatalf("duration %d ms < the upstream's delay", rows[0].DurationMs)
	}
}
