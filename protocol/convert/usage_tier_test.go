package convert

import (
	"testing"

	"ccload/protocol"
)

// TestServiceTierIsRead: the OpenAI service tier actually used (it changes
// the price) is read from native Chat and Responses answers, stream and not.
func TestServiceTierIsRead(t *testing.T) {
	chat := []byte(`{"id":"c","object":"chat.completion","service_tier":"flex","usage":{"prompt_tokens":10,"completion_tokens":5}}`)
	if u := UsageOf(protocol.OpenAI, chat); u.ServiceTier != "flex" || u.Input != 10 {
		t.Fatalf("chat: %+v", u)
	}
	resp := []byte(`{"id":"r","object":"response","service_tier":"priority","usage":{"input_tokens":7,"output_tokens":3}}`)
	if u := UsageOf(protocol.Responses, resp); u.ServiceTier != "priority" || u.Output != 3 {
		t.Fatalf("responses: %+v", u)
	}
	tr := NewUsageTracker(protocol.OpenAI)
	tr.Observe(&protocol.Event{Data: []byte(`{"id":"c","choices":[],"service_tier":"flex","usage":{"prompt_tokens":4,"completion_tokens":2}}`)})
	if u := tr.Usage(); u.ServiceTier != "flex" || u.Output != 2 {
		t.Fatalf("chat stream: %+v", u)
	}
	tr = NewUsageTracker(protocol.Responses)
	tr.Observe(&protocol.Event{Name: []byte("response.completed"), Data: []byte(`{"type":"response.completed","response":{"service_tier":"priority","usage":{"input_tokens":4,"output_tokens":2}}}`)})
	if u := tr.Usage(); u.ServiceTier != "priority" || u.Input != 4 {
		t.Fatalf("responses stream: %+v", u)
	}
}

// noTier drops the service tier, for tests that compare token counts only.
func noTier(u Usage) Usage {
	u.ServiceTier = ""
	return u
}
