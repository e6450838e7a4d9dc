package engine_test

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ccload/ccload/store"
)

const costConfig = `version: 1
server: {admin_password: test}
storage: {driver: sqlite, dsn: "{{DB}}"}
pricing:
  m1: {input: 1000, output: 2000, cache_read: 100, cache_write: 500}
channels:
  - name: a
    urls: [{url: "{{MOCK}}", protocols: [anthropic]}]
    keys: [key-a1-000000]
    models: [m1]
    cost_multiplier: 2
tokens:
  - name: tester
    token_sha256: "{{TOKEN_SHA}}"
    cost_limit: 0.15
`

// TestCostIsLoggedAggregatedAndLimited: the mock's usage (21 uncached + 8
// cache-read + 4 cache-write input tokens, 13 output) priced by the file's
// table, doubled by cost_multiplier, lands on the row and in usage_daily,
// and the token is refused once it has spent its cost_limit.
func TestCostIsLoggedAggregatedAndLimited(t *testing.T) {
	_, mockURL := startMock(t, mockOptions())
	g := startGateway(t, strings.ReplaceAll(costConfig, "{{MOCK}}", mockURL))
	want := 2 * (21*1000 + 8*100 + 4*500 + 13*2000) / 1e6 // 0.0996 USD
	send := func(stream bool) int {
		body := `{"model":"m1","max_tokens":16,"messages":[{"role":"user","content":"hi"}]`
		if stream {
			body += `,"stream":true`
		}
		resp, _ := post(t, g.URL+"/v1/messages", body+"}", map[string]string{"x-api-key": testToken, "anthropic-version": "2023-06-01"})
		return resp.StatusCode
	}
	if st := send(false); st != 200 {
		t.Fatalf("first: %d", st)
	}
	if st := send(true); st != 200 {
		t.Fatalf("second (stream): %d", st)
	}
	rows := g.waitLogs(t, 2)
	for _, r := range rows {
		if math.Abs(r.Cost-want) > 1e-9 {
			t.Fatalf("row cost %.6f, want %.6f (row %+v)", r.Cost, want, r)
		}
	}
	days, err := g.Store.UsageDaily(context.Background(), time.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly))
	if err != nil || len(days) != 1 || math.Abs(days[0].Cost-2*want) > 1e-9 || days[0].Requests != 2 {
		t.Fatalf("usage_daily %+v %v", days, err)
	}
	// Spent 0.1992 of 0.15: refused, with a message naming the limit.
	resp, body := post(t, g.URL+"/v1/messages", `{"model":"m1","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}`,
		map[string]string{"x-api-key": testToken, "anthropic-version": "2023-06-01"})
	if resp.StatusCode != 429 || !strings.Contains(body, "cost_limit") {
		t.Fatalf("over the limit: %d %s", resp.StatusCode, body)
	}
	var rejected []store.LogRow
	for _, r := range g.waitLogs(t, 3) {
		if r.Status == 429 {
			rejected = append(rejected, r)
		}
	}
	if len(rejected) != 1 {
		t.Fatalf("rejected rows %+v", rejected)
	}
}

// TestChannelDailyCostLimit: once channel a spent its daily_cost_limit,
// requests go to channel b, with no cooldown.
func TestChannelDailyCostLimit(t *testing.T) {
	m, mockURL := startMock(t, mockOptions())
	cfg := strings.ReplaceAll(`version: 1
server: {admin_password: test}
storage: {driver: sqlite, dsn: "{{DB}}"}
pricing:
  m1: {input: 1000, output: 2000}
channels:
  - name: a
    priority: 10
    urls: [{url: "{{MOCK}}", protocols: [anthropic]}]
    keys: [key-a1-000000]
    models: [m1]
    daily_cost_limit: 0.01
  - name: b
    urls: [{url: "{{MOCK}}", protocols: [anthropic]}]
    keys: [key-b1-000000]
    models: [m1]
tokens:
  - name: tester
    token_sha256: "{{TOKEN_SHA}}"
`, "{{MOCK}}", mockURL)
	g := startGateway(t, cfg)
	var via []string
	for range 2 {
		if st, body := sendModel(t, g, "m1"); st != 200 {
			t.Fatalf("%d %s", st, body)
		}
		via = append(via, lastKey(m))
	}
	if via[0] != "key-a1-000000" || via[1] != "key-b1-000000" {
		t.Fatalf("served via %v: channel a should stop after spending its daily limit", via)
	}
	if n := len(g.Engine.Cooldowns().List()); n != 0 {
		t.Fatalf("a cost limit caused %d cooldowns", n)
	}
}
