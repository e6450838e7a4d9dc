package admin

import (
	"strings"
	"testing"

	"github.com/ccload/ccload/store"
)

// TestObserveMakesOnlyTheSeriesItCounts: a request's series are found
// together (seriesOf), but the token types, TTFB and attempts series it
// does not count into still do not appear in /metrics until something
// counts into them, and a second request of the same labels lands in the
// same series.
func TestObserveMakesOnlyTheSeriesItCounts(t *testing.T) {
	m := NewMetrics(nil)
	failed := store.LogRow{Channel: "c1", Model: "m", Token: "t", Status: 502, ClientProtocol: "openai", DurationMs: 5}
	m.Observe(&failed)
	text := string(m.reg.AppendText(nil))
	for _, absent := range []string{`ccload_tokens_total{`, `ccload_ttfb_seconds_count{`, `ccload_upstream_attempts_total{`} {
		if strings.Contains(text, absent) {
			t.Errorf("a request that counted nothing there made %s…", absent)
		}
	}
	ok := store.LogRow{Channel: "c1", Model: "m", Token: "t", Status: 200, ClientProtocol: "openai",
		Attempts: 1, AttemptsJSON: `[{"channel":"c1"}]`, TTFBMs: 7, DurationMs: 9, InputTokens: 3, ReasoningTokens: 2}
	m.Observe(&ok)
	m.Observe(&ok)
	text = string(m.reg.AppendText(nil))
	for _, line := range []string{
		`ccload_requests_total{channel="c1",model="other",status_class="2xx",client_protocol="openai"} 2`,
		`ccload_requests_total{channel="c1",model="other",status_class="5xx",client_protocol="openai"} 1`,
		`ccload_tokens_total{channel="c1",model="other",type="input"} 6`,
		`ccload_tokens_total{channel="c1",model="other",type="reasoning"} 4`,
		`ccload_ttfb_seconds_count{channel="c1"} 2`,
		`ccload_upstream_attempts_total{channel="c1"} 2`,
		`ccload_request_duration_seconds_count{channel="c1",stream="false"} 3`,
	} {
		if !strings.Contains(text, line+"\n") {
			t.Errorf("missing %q in\n%s", line, text)
		}
	}
	if strings.Contains(text, `type="output"`) || strings.Contains(text, `type="cache_read"`) {
		t.Errorf("token types no request had appear:\n%s", text)
	}
}
