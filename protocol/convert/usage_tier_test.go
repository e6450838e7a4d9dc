package convert

import (
	"testing"

	"github.com/ccload/ccload/protocol"
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
	u.ServiceTier, u.CacheWrite1h = "", 0
	return u
}

// TestAnthropicOneHourCacheWrites: the one-hour share of cache writes is
// kept apart, because it is priced at 2x input instead of 1.25x.
func TestAnthropicOneHourCacheWrites(t *testing.T) {
	body := []byte(`{"type":"message","usage":{"input_tokens":10,"cache_creation_input_tokens":300,"cache_read_input_tokens":0,` +
		`"cache_creation":{"ephemeral_5m_input_tokens":100,"ephemeral_1h_input_tokens":200},"output_tokens":5}}`)
	u := UsageOf(protocol.Anthropic, body)
	if u.CacheWrite != 300 || u.CacheWrite1h != 200 || u.Input != 310 {
		t.Fatalf("usage %+v", u)
	}
}
