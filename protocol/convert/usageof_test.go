package convert

import (
	"testing"

	"github.com/ccload/ccload/protocol"
)

// TestUsageOfAnthropicReadsTheTopLevelUsage: only the answer's own usage
// member counts, whatever else is in the body.
func TestUsageOfAnthropicReadsTheTopLevelUsage(t *testing.T) {
	for _, c := range []struct {
		body string
		want Usage
	}{
		{`{"content":[{"type":"text","text":"usage"}],"usage":{"input_tokens":7,"cache_read_input_tokens":3,"output_tokens":2}}`, Usage{Input: 10, CacheRead: 3, Output: 2}},
		{`{"content":[{"type":"tool_use","input":{"usage":{"input_tokens":99}}}],"usage":{"input_tokens":1,"output_tokens":1}}`, Usage{Input: 1, Output: 1}},
		{`{"content":[{"type":"tool_use","input":{"usage":{"input_tokens":99}}}]}`, Usage{}},
		{`{"usage":"none"}`, Usage{}},
		{`{"usage":{"input_tokens":5}`, Usage{Input: 5}},         // cut after usage: usage is whole
		{`{"usage":{"input_tokens":5,"output_tokens":`, Usage{}}, // cut inside usage: nothing counted
		{`garbage`, Usage{}},
	} {
		if got := UsageOf(protocol.Anthropic, []byte(c.body)); got != c.want {
			t.Errorf("UsageOf(%s) = %+v, want %+v", c.body, got, c.want)
		}
	}
}
