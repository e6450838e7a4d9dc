package securitytest

import (
	"net/http"
	"testing"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
)

// twoKeys is config with a second key on channel a, so that a key-scope
// cooldown shows as the first key cooling and a channel one as both.
func twoKeys(serverKeys, upstream, extra string) string {
	return replaceOnce(config(serverKeys, upstream, extra), "keys: ["+channelKey+"]", "keys: ["+channelKey+", "+channelKey+"-2]")
}

// Finding: providers quote the client's unknown field names in their 400
// messages, and the classifier read key, region and model phrases from
// that free text before the status: a field named API_KEY_INVALID cooled
// every key of the channel. A 4xx is classified by its status and its
// structured fields only, so each of these is the client's fault: the
// client gets its 400, nothing cools, and the next request reaches the
// upstream.
func TestEchoedFieldNamesCoolNothing(t *testing.T) {
	bodies := []string{
		// Gemini quotes an unknown field name.
		`{"error":{"code":400,"message":"Invalid JSON payload received. Unknown name \"API_KEY_INVALID\": Cannot find field.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"description":"Invalid JSON payload received. Unknown name \"API_KEY_INVALID\": Cannot find field."}]}]}}`,
		// OpenAI quotes an unknown argument.
		`{"error":{"message":"Unrecognized request argument supplied: invalid_api_key","type":"invalid_request_error","param":null,"code":null}}`,
		`{"error":{"message":"Unrecognized request argument supplied: user location is not supported","type":"invalid_request_error","param":null,"code":null}}`,
		`{"error":{"message":"Unrecognized request argument supplied: model_not_found","type":"invalid_request_error","param":null,"code":null}}`,
	}
	for _, raw := range bodies {
		m := mockupstream.New(mockupstream.Options{Script: func(r *mockupstream.Recorded) mockupstream.Reply {
			if r.Model == "claude-x" {
				return mockupstream.Reply{Status: 400, Raw: []byte(raw)}
			}
			return mockupstream.Reply{}
		}})
		up, err := m.Start("127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		s := start(t, twoKeys("", up, ""))
		for i := range 2 {
			resp, body := do(t, "POST", s.URL+"/v1/messages", anthropicBody, map[string]string{"x-api-key": token})
			if resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("%s: request %d: got %d %s, want the upstream's 400", raw, i, resp.StatusCode, body)
			}
		}
		if n := len(m.Requests()); n != 2 {
			t.Errorf("%s: upstream got %d requests, want 2 (one each, no failover, nothing cooled)", raw, n)
		}
		noCooldowns(t, s)
		m.Close()
	}
}
