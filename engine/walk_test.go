//go:build walk

package engine_test

import (
	"os"
	"strconv"
	"testing"
)

// TestWalk sends CCLOAD_WALK_N warm non-stream requests. `make walk` runs
// it with coverage counts for N and N+1 requests; the blocks whose counts
// differ are what one request executes (docs/architecture.md, "One
// non-stream request").
func TestWalk(t *testing.T) {
	n, err := strconv.Atoi(os.Getenv("CCLOAD_WALK_N"))
	if err != nil {
		t.Fatal("CCLOAD_WALK_N is not a number: run `make walk`")
	}
	g, _ := startNative(t)
	body := `{"model":"claude-client","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`
	hdr := map[string]string{"x-api-key": testToken}
	for i := 0; i < n; i++ {
		if resp, _ := post(t, g.URL+"/v1/messages", body, hdr); resp.StatusCode != 200 {
			t.Fatalf("request %d: status %d", i, resp.StatusCode)
		}
		g.waitLogs(t, i+1)
	}
}
