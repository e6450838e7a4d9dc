package engine_test

import (
	"strings"
	"testing"

	"github.com/ccload/ccload/pricing"
	"github.com/ccload/ccload/store"
)

// unpricedConfig serves a made-up model and a priced one. {{TOKEN}} and
// {{ROUTING}} select the case.
const unpricedConfig = `version: 1
server: {admin_password: test}
storage: {driver: sqlite, dsn: "{{DB}}"}
routing: {max_attempts: 3{{ROUTING}}}
channels:
  - name: limited
    priority: 10
    urls: [{url: "{{MOCK}}", protocols: [anthropic]}]
    keys: [key-limited-0001]
    models: [made-up-model, claude-haiku-4-5]
    daily_cost_limit: {{DAILY}}
{{OTHER}}
tokens:
  - name: tester
    token_sha256: "{{TOKEN_SHA}}"
{{TOKEN}}
`

const otherChannel = `  - name: open
    urls: [{url: "{{MOCK}}", protocols: [anthropic]}]
    keys: [key-open-0001]
    models: [made-up-model]`

func unpricedGateway(t *testing.T, token, routing, daily, other string) (*gateway, string) {
	t.Helper()
	_, mockURL := startMock(t, mockOptions())
	cfg := strings.NewReplacer("{{TOKEN}}", token, "{{ROUTING}}", routing, "{{DAILY}}", daily, "{{OTHER}}", other).Replace(unpricedConfig)
	return startGateway(t, strings.ReplaceAll(cfg, "{{MOCK}}", mockURL)), mockURL
}

// TestUnpricedRefusedUnderCostLimits: a model with no price cannot be held
// to a cost limit, so it is refused with a 403 in the client's shape that
// names the model and the limit, while priced models pass.
func TestUnpricedRefusedUnderCostLimits(t *testing.T) {
	t.Run("token cost_limit, anthropic shape", func(t *testing.T) {
		g, _ := unpricedGateway(t, "    cost_limit: 5", "", "0", "")
		st, body := sendModel(t, g, "made-up-model")
		if st != 403 || !strings.Contains(body, `"type":"error"`) || !strings.Contains(body, `made-up-model`) ||
			!strings.Contains(body, `cost_limit`) || !strings.Contains(body, `routing.unpriced: allow`) {
			t.Fatalf("unpriced model under a token cost_limit: %d %s", st, body)
		}
		if st, body := sendModel(t, g, "claude-haiku-4-5"); st != 200 {
			t.Fatalf("priced model: %d %s", st, body)
		}
		rows := g.waitLogs(t, 2)
		if rows[1].Status != 403 || !strings.Contains(rows[1].Error, "no price") || rows[1].Channel != "" {
			t.Errorf("refused row = %+v; want a 403 row with the reason and no upstream attempt", rows[1])
		}
		if rows[0].Cost <= 0 || rows[0].Unpriced {
			t.Errorf("priced row = cost %v unpriced %v", rows[0].Cost, rows[0].Unpriced)
		}
	})
	t.Run("token cost_limit, openai shape", func(t *testing.T) {
		g, _ := unpricedGateway(t, "    cost_limit: 5", "", "0", "")
		resp, body := post(t, g.URL+"/v1/chat/completions", `{"model":"made-up-model","messages":[{"role":"user","content":"hi"}]}`,
			map[string]string{"Authorization": "Bearer " + testToken})
		if resp.StatusCode != 403 || !strings.HasPrefix(body, `{"error":{`) || !strings.Contains(body, "made-up-model") {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
	})
	t.Run("channel daily_cost_limit, no other channel", func(t *testing.T) {
		g, _ := unpricedGateway(t, "", "", "10", "")
		st, body := sendModel(t, g, "made-up-model")
		if st != 403 || !strings.Contains(body, `channel \"limited\"`) || !strings.Contains(body, "daily_cost_limit") {
			t.Fatalf("%d %s", st, body)
		}
	})
	t.Run("channel daily_cost_limit, an unlimited channel serves it", func(t *testing.T) {
		g, _ := unpricedGateway(t, "", "", "10", otherChannel)
		if st, body := sendModel(t, g, "made-up-model"); st != 200 {
			t.Fatalf("%d %s", st, body)
		}
		row := g.waitLogs(t, 1)[0]
		if row.Channel != "open" || !row.Unpriced || row.Cost != 0 {
			t.Errorf("row = channel %q unpriced %v cost %v; want channel open (the limited one skipped), unpriced, cost 0",
				row.Channel, row.Unpriced, row.Cost)
		}
	})
	t.Run("no cost limit at all", func(t *testing.T) {
		g, _ := unpricedGateway(t, "", "", "0", "")
		if st, body := sendModel(t, g, "made-up-model"); st != 200 {
			t.Fatalf("%d %s", st, body)
		}
		if row := g.waitLogs(t, 1)[0]; !row.Unpriced || row.Cost != 0 || row.InputTokens == 0 {
			t.Errorf("row = %+v; want served and flagged unpriced", row)
		}
	})
	t.Run("routing.unpriced allow", func(t *testing.T) {
		g, _ := unpricedGateway(t, "    cost_limit: 5", ", unpriced: allow", "10", "")
		if st, body := sendModel(t, g, "made-up-model"); st != 200 {
			t.Fatalf("%d %s", st, body)
		}
		row := g.waitLogs(t, 1)[0]
		if row.Status != 200 || !row.Unpriced || row.Cost != 0 || row.Channel != "limited" {
			t.Errorf("row = %+v; want served by limited and logged as unpriced with cost 0", row)
		}
	})
}

// TestGatewayFamiliesArePriced: requests for the DeepSeek, Qwen, GLM and
// Kimi families through a channel are logged with a cost above zero from
// the embedded table, and a relay's renamed upstream name is priced by the
// name the client asked for.
func TestGatewayFamiliesArePriced(t *testing.T) {
	_, mockURL := startMock(t, mockOptions())
	g := startGateway(t, strings.ReplaceAll(`version: 1
server: {admin_password: test}
storage: {driver: sqlite, dsn: "{{DB}}"}
channels:
  - name: relay
    urls: [{url: "{{MOCK}}/v1", protocols: [openai]}]
    keys: [key-relay-0001]
    models: [deepseek-v4-flash, qwen3.7-plus, glm-5.1, kimi-k2.6, {name: deepseek-chat, upstream: relay-ds-v4-0424}]
    daily_cost_limit: 100
tokens:
  - name: tester
    token_sha256: "{{TOKEN_SHA}}"
    cost_limit: 100
`, "{{MOCK}}", mockURL))
	models := []string{"deepseek-v4-flash", "qwen3.7-plus", "glm-5.1", "kimi-k2.6", "deepseek-chat"}
	for _, m := range models {
		resp, body := post(t, g.URL+"/v1/chat/completions", `{"model":"`+m+`","messages":[{"role":"user","content":"hi"}]}`,
			map[string]string{"Authorization": "Bearer " + testToken})
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", m, resp.StatusCode, body)
		}
	}
	rows := g.waitLogs(t, len(models))
	byModel := map[string]store.LogRow{}
	for _, r := range rows {
		byModel[r.Model] = r
	}
	for _, m := range models {
		r := byModel[m]
		want := pricing.Default().Cost(m, pricing.Usage{Input: r.InputTokens, Output: r.OutputTokens, CacheRead: r.CacheReadTokens, CacheWrite: r.CacheWriteTokens}, 1)
		if r.Cost <= 0 || r.Unpriced || !want.Known || !near(r.Cost, want.USD) {
			t.Errorf("%s: logged cost %v unpriced %v (tokens in %d out %d); want %v from the embedded table",
				m, r.Cost, r.Unpriced, r.InputTokens, r.OutputTokens, want.USD)
		}
	}
}

func near(a, b float64) bool { d := a - b; return d < 1e-12 && d > -1e-12 }
