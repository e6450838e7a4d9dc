package securitytest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// echoUpstream answers every request with the channel key it received
// echoed back: a 400 error body for plain requests, a Responses stream that
// fails with response.failed for streams.
func echoUpstream(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("x-api-key") + strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		if strings.HasSuffix(r.URL.Path, "/responses") {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"r\",\"status\":\"in_progress\"}}\n\n")
			fmt.Fprintf(w, "event: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"id\":\"r\",\"status\":\"failed\",\"error\":{\"code\":\"server_error\",\"message\":\"upstream broke while using key %s\"}}}\n\n", key)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(400)
		fmt.Fprintf(w, `{"type":"error","error":{"type":"invalid_request_error","message":"your request with key %s is invalid"}}`, key)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// Finding: a relayed upstream 400 body and a Responses response.failed
// message reach the client, the log row, the cooldown reason and the CLI
// unredacted; an upstream echoing its key leaks the channel key.
func TestEchoedKeyIsRedacted(t *testing.T) {
	s := start(t, config("", echoUpstream(t), ""))
	resp, body := do(t, "POST", s.URL+"/v1/messages", anthropicBody, map[string]string{"x-api-key": token})
	if resp.StatusCode != 400 || strings.Contains(body, channelKey) || !strings.Contains(body, "is invalid") {
		t.Fatalf("relayed 400: %d %s", resp.StatusCode, body)
	}
	resp, body = do(t, "POST", s.URL+"/v1/responses", `{"model":"gpt-x","input":"hi","stream":true}`, map[string]string{"Authorization": "Bearer " + token})
	if resp.StatusCode < 500 || strings.Contains(body, channelKey) || !strings.Contains(body, "upstream broke") {
		t.Fatalf("response.failed: %d %s", resp.StatusCode, body)
	}
	rows := s.logs(t, 2)
	for _, r := range rows {
		if strings.Contains(r.Error, channelKey) || strings.Contains(r.AttemptsJSON, channelKey) {
			t.Errorf("log row holds the key: %q %s", r.Error, r.AttemptsJSON)
		}
	}
	cds := s.cooldowns(t, 1)
	for _, c := range cds {
		if strings.Contains(c.Reason, channelKey) {
			t.Errorf("cooldown reason holds the key: %q", c.Reason)
		}
	}
	s.Stop()
	if l := s.leaks(t, channelKey); len(l) > 0 {
		t.Errorf("leaked: %v", l)
	}
}
