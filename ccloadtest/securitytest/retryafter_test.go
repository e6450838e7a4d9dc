package securitytest

import (
	"testing"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
)

// Finding: when every candidate answered 429 with a Retry-After, the
// client's 429 had none, stream or not, so clients retried at once. The
// client's 429 carries the soonest of the upstreams' waits, and the 503
// answered while they all cool carries the wait until the first recovers.
func TestRateLimitKeepsRetryAfter(t *testing.T) {
	m := mockupstream.New(mockupstream.Options{Script: func(r *mockupstream.Recorded) mockupstream.Reply {
		wait := "30"
		if r.Key == channelKey+"-2" {
			wait = "7"
		}
		return mockupstream.Reply{Status: 429, Header: map[string]string{"Retry-After": wait}}
	}})
	up, err := m.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	for _, body := range []string{
		anthropicBody,
		`{"model":"claude-x","max_tokens":8,"stream":true,"messages":[{"role":"user","content":"hi"}]}`,
	} {
		s := start(t, twoKeys("", up, ""))
		resp, got := do(t, "POST", s.URL+"/v1/messages", body, map[string]string{"x-api-key": token})
		if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "7" {
			t.Errorf("%s: got %d Retry-After %q (%s), want 429 with the soonest upstream wait, 7", body, resp.StatusCode, resp.Header.Get("Retry-After"), got)
		}
		// Both keys now cool: the next request is refused without an
		// attempt, and told when the first key recovers.
		resp, got = do(t, "POST", s.URL+"/v1/messages", body, map[string]string{"x-api-key": token})
		if ra := resp.Header.Get("Retry-After"); resp.StatusCode < 429 || ra == "" || ra == "0" {
			t.Errorf("%s: while cooling got %d Retry-After %q (%s), want a wait", body, resp.StatusCode, ra, got)
		}
	}
}
