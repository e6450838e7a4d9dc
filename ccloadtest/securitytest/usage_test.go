package securitytest

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/ccload/ccload/store"
)

// Finding: usage_daily kept a row per (day, token, channel, model) of every
// request, rejected ones included, and nothing pruned it: 2,000 requests
// answered 403/404, each naming a new model string, added 2,000 rows. A
// request no upstream saw is counted under no model, so a token's
// rejections add one row a day, whatever they name.
func TestRejectedModelsDoNotGrowUsage(t *testing.T) {
	_, up := startMock(t)
	s := start(t, config("", up, ""))
	const n = 40
	for i := range n {
		body := fmt.Sprintf(`{"model":"made-up-%d","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`, i)
		if resp, b := do(t, "POST", s.URL+"/v1/messages", body, map[string]string{"x-api-key": token}); resp.StatusCode != 404 {
			t.Fatalf("request %d: %d %s", i, resp.StatusCode, b)
		}
	}
	if resp, b := do(t, "POST", s.URL+"/v1/messages", anthropicBody, map[string]string{"x-api-key": token}); resp.StatusCode != 200 {
		t.Fatalf("served request: %d %s", resp.StatusCode, b)
	}
	s.logs(t, n+1)
	st, err := store.Open(context.Background(), "sqlite", s.DB)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	days, err := st.UsageDaily(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(days) != 2 {
		t.Errorf("usage_daily has %d rows, want 2 (the served model, and the rejections under none): %+v", len(days), days)
	}
}

// Finding (same): retention never pruned usage_daily. The rows of
// requests no upstream saw (no channel, no cost) go with the request logs
// of their day; rows with a channel stay, as lifetime cost limits are read
// from them.
func TestRetentionPrunesRejectedUsage(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, "sqlite", filepath.Join(t.TempDir(), "u.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	old := time.Now().Add(-40 * 24 * time.Hour)
	err = st.InsertLogs(ctx, []store.LogRow{
		{Time: old, RequestID: "a", Token: "t", Model: "made-up-1", Status: 404},
		{Time: old, RequestID: "b", Token: "t", Channel: "a", Model: "claude-x", Status: 200, Cost: 0.5},
		{Time: time.Now(), RequestID: "c", Token: "t", Model: "made-up-2", Status: 404},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.PruneLogs(ctx, time.Now().Add(-30*24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	days, err := st.UsageDaily(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(days) != 2 || days[0].Channel != "a" || days[1].Channel != "" || days[1].Day == days[0].Day {
		t.Errorf("after pruning: %+v, want the old day's channel row and today's rejections", days)
	}
	if c, _ := st.TokenCost(ctx, "t"); c != 0.5 {
		t.Errorf("token cost %v after pruning, want 0.5", c)
	}
}
