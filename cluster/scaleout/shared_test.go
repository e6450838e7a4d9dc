package scaleout

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
	"github.com/ccload/ccload/ccloadtest/wait"
)

// Shared state (storage.shared: cooldowns, spend and session pins):
// two real `ccload serve` processes on one database behave as one gateway.

const (
	clientToken = "sk-scaleout-client-0001"
	badKey      = "sk-scaleout-bad-0001"  // the mock refuses it: 401
	goodKey     = "sk-scaleout-good-0002" // accepted
	pinKeyA     = "sk-scaleout-pin-a-0003"
	pinKeyB     = "sk-scaleout-pin-b-0004"
)

// syncWithin is the bound on how fast an instance sees another's
// change.
const syncWithin = time.Second

// sharedPair starts a mock upstream and two instances of body's config on
// one fresh database, and returns the mock and both addresses.
func sharedPair(t *testing.T, driver, dsn, channels, tokens string) (*mockupstream.Server, string, string) {
	mock := mockupstream.New(mockupstream.Options{Keys: []string{goodKey, pinKeyA, pinKeyB}})
	url, err := mock.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mock.Close() })
	body := fmt.Sprintf(`version: 1
server: {listen: "127.0.0.1:0", admin_password: %s}
storage: {driver: %s, dsn: %q, shared: true}
pricing:
  m: {input: 1000, output: 1000, cache_read: 1000, cache_write: 1000}
channels:
%s
tokens:
%s
`, adminPass, driver, dsn, fmt.Sprintf(channels, url, url), tokens)
	cfg := filepath.Join(t.TempDir(), "ccload.yaml")
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	a := startServe(t, cfg)
	b := startServe(t, cfg)
	if t.Failed() {
		t.FailNow()
	}
	return mock, a, b
}

// message sends one Anthropic request through addr and returns its status.
func message(t *testing.T, addr string, header map[string]string) int {
	t.Helper()
	req, _ := http.NewRequest("POST", "http://"+addr+"/v1/messages",
		bytes.NewReader([]byte(`{"model":"m","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}`)))
	req.Header.Set("x-api-key", clientToken)
	req.Header.Set("anthropic-version", "2023-06-01")
	req.Header.Set("content-type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// adminCall calls the admin API of addr with the admin password and
// decodes the JSON answer into out (when not nil).
func adminCall(t *testing.T, addr, method, path, body string, out any) {
	t.Helper()
	req, _ := http.NewRequest(method, "http://"+addr+path, bytes.NewReader([]byte(body)))
	req.Header.Set("Authorization", "Bearer "+adminPass)
	req.Header.Set("content-type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s = %d: %s", method, path, resp.StatusCode, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, raw)
		}
	}
}

type cooldownList struct {
	Cooldowns []struct {
		Scope, Channel, Key, Kind string
	} `json:"cooldowns"`
}

// keyCooling reports whether addr shows a key cooldown on channel "up".
func keyCooling(t *testing.T, addr string) bool {
	var l cooldownList
	adminCall(t, addr, "GET", "/admin/cooldowns", "", &l)
	for _, c := range l.Cooldowns {
		if c.Scope == "key" && c.Channel == "up" {
			return true
		}
	}
	return false
}

// within polls cond every 20 ms and returns how long it took to hold, or
// fails the test after limit.
func within(t *testing.T, limit time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	wait.Eventually(t, limit, what, cond)
	return time.Since(start)
}

// hits counts the mock's requests made with key.
func hits(mock *mockupstream.Server, key string) int {
	n := 0
	for _, r := range mock.Requests() {
		if r.Key == key {
			n++
		}
	}
	return n
}

const cooldownChannels = `  - name: up
    urls: [{url: %s, protocols: [anthropic]}]
    keys: [` + badKey + `, ` + goodKey + `]
    key_strategy: round_robin
    models: [m]
    affinity: false
#%s`

const plainToken = `  - name: t
    token: ` + clientToken

func TestSharedCooldownsPostgres(t *testing.T) {
	t.Parallel()
	sharedCooldowns(t, "postgres", freshPostgres(t))
}

func TestSharedCooldownsMySQL(t *testing.T) {
	t.Parallel()
	sharedCooldowns(t, "mysql", freshMySQL(t))
}

// sharedCooldowns: a key cooled through A steers B within a second (B
// sends it nothing); clearing it on A clears it on B; a pause on A pauses
// B and a resume resumes it.
func sharedCooldowns(t *testing.T, driver, dsn string) {
	mock, a, b := sharedPair(t, driver, dsn, cooldownChannels, plainToken)

	// Round-robin reaches the bad key within two requests; each request
	// still succeeds on the good key.
	for i := 0; hits(mock, badKey) == 0; i++ {
		if i == 4 {
			t.Fatal("A never tried the bad key")
		}
		if st := message(t, a, nil); st != http.StatusOK {
			t.Fatalf("request through A = %d, want 200 (failover to the good key)", st)
		}
	}
	if !keyCooling(t, a) {
		t.Fatal("A does not show the bad key cooling after its 401")
	}
	took := within(t, syncWithin, "B sees A's cooldown", func() bool { return keyCooling(t, b) })
	t.Logf("%s: B saw A's cooldown after %v", driver, took)

	mock.Reset()
	for range 6 {
		if st := message(t, b, nil); st != http.StatusOK {
			t.Fatalf("request through B = %d, want 200", st)
		}
	}
	if n := hits(mock, badKey); n != 0 {
		t.Errorf("B sent %d requests to the key A had cooled; want 0", n)
	}
	if n := hits(mock, goodKey); n != 6 {
		t.Errorf("B sent %d requests to the good key, want 6", n)
	}

	adminCall(t, a, "POST", "/admin/cooldowns/clear", `{"channel":"up","scope":"key"}`, nil)
	took = within(t, syncWithin, "B sees A's clear", func() bool { return !keyCooling(t, b) })
	t.Logf("%s: B saw the clear after %v", driver, took)

	paused := func(addr string) bool {
		var l []struct {
			Name   string `json:"name"`
			Paused bool   `json:"paused"`
		}
		var wrap struct {
			Channels json.RawMessage `json:"channels"`
		}
		adminCall(t, addr, "GET", "/admin/channels", "", &wrap)
		if err := json.Unmarshal(wrap.Channels, &l); err != nil {
			t.Fatal(err)
		}
		for _, c := range l {
			if c.Name == "up" {
				return c.Paused
			}
		}
		t.Fatal("no channel up in /admin/channels")
		return false
	}
	adminCall(t, a, "POST", "/admin/channels/up/pause", "", nil)
	within(t, syncWithin, "B sees A's pause", func() bool { return paused(b) })
	if st := message(t, b, nil); st == http.StatusOK {
		t.Error("B served a request on a channel A paused")
	}
	adminCall(t, a, "POST", "/admin/channels/up/resume", "", nil)
	within(t, syncWithin, "B sees A's resume", func() bool { return !paused(b) })
}

const spendChannels = `  - name: up
    urls: [{url: %s, protocols: [anthropic]}]
    keys: [` + goodKey + `]
    models: [m]
#%s`

// spendLimit is the token's cost_limit: a few requests' worth (each costs
// 46 tokens at $1000 per million, $0.046).
const spendLimit = 0.2

func TestSharedSpendPostgres(t *testing.T) {
	t.Parallel()
	dsn := freshPostgres(t)
	sharedSpend(t, "postgres", dsn, "pgx", dsn)
}

func TestSharedSpendMySQL(t *testing.T) {
	t.Parallel()
	dsn := freshMySQL(t)
	sharedSpend(t, "mysql", dsn, "mysql", dsn)
}

// sharedSpend: a token's cost_limit holds across both instances. Requests
// alternate between A and B with a pause longer than the sync bound, so
// the bound on overshoot is exact: the cluster admits requests until the
// shared total reaches the limit, and not one more. Two instances that
// did not share spend would each admit that many.
func sharedSpend(t *testing.T, driver, dsn, sqlDriver, sqlDSN string) {
	tokens := plainToken + fmt.Sprintf("\n    cost_limit: %v", spendLimit)
	_, a, b := sharedPair(t, driver, dsn, spendChannels, tokens)
	ok, refused := 0, 0
	for i := 0; i < 16 && refused < 2; i++ {
		addr := a
		if i%2 == 1 {
			addr = b
		}
		switch st := message(t, addr, nil); st {
		case http.StatusOK:
			if refused > 0 {
				t.Errorf("request %d was served after the limit refused one", i)
			}
			ok++
		case http.StatusTooManyRequests:
			refused++
		default:
			t.Fatalf("request %d = %d", i, st)
		}
		// The sync bound is the contract under test, not a guess: each
		// request must find the other instance's spend already counted.
		time.Sleep(syncWithin + 100*time.Millisecond)
	}
	if refused < 2 {
		t.Fatalf("the cost limit never refused on both instances (%d served)", ok)
	}

	db, err := sql.Open(sqlDriver, sqlDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var spent float64
	if err := db.QueryRow("SELECT usd FROM shared_spend WHERE kind = 'token' AND name = 't'").Scan(&spent); err != nil {
		t.Fatal(err)
	}
	per := spent / float64(ok)
	want := int(math.Ceil(spendLimit/per - 1e-9))
	t.Logf("%s: %d requests served at $%.4f each, $%.4f spent of a $%v limit", driver, ok, per, spent, spendLimit)
	if ok != want {
		t.Errorf("served %d requests across both instances; want %d (the limit reached once, shared)", ok, want)
	}
}

const pinChannels = `  - name: c1
    urls: [{url: %s, protocols: [anthropic]}]
    keys: [` + pinKeyA + `]
    models: [m]
  - name: c2
    urls: [{url: %s, protocols: [anthropic]}]
    keys: [` + pinKeyB + `]
    models: [m]`

func TestSharedPinsPostgres(t *testing.T) {
	t.Parallel()
	sharedPins(t, "postgres", freshPostgres(t))
}

func TestSharedPinsMySQL(t *testing.T) {
	t.Parallel()
	sharedPins(t, "mysql", freshMySQL(t))
}

// sharedPins: sessions pinned through A are served on the same channel
// through B. A first serves one request of another conversation, so its
// round-robin is one step ahead of B's: without shared pins B would put
// every session on the other channel.
func sharedPins(t *testing.T, driver, dsn string) {
	mock, a, b := sharedPair(t, driver, dsn, pinChannels, plainToken)
	served := func(addr, session string) string {
		t.Helper()
		h := map[string]string{}
		if session != "" {
			h["x-claude-code-session-id"] = session
		}
		if st := message(t, addr, h); st != http.StatusOK {
			t.Fatalf("session %q through %s = %d", session, addr, st)
		}
		rs := mock.Requests()
		return rs[len(rs)-1].Key
	}
	served(a, "")
	sessions := []string{"s-1", "s-2", "s-3", "s-4"}
	onA := map[string]string{}
	perKey := map[string]int{}
	for _, s := range sessions {
		onA[s] = served(a, s)
		perKey[onA[s]]++
	}
	if perKey[pinKeyA] == 0 || perKey[pinKeyB] == 0 {
		t.Fatalf("A put every session on one channel (%v); the test needs both", perKey)
	}
	// The sync bound is the contract under test: after it, B must route
	// every session as A pinned it. Polling B instead would pin sessions
	// on B and change what is measured.
	time.Sleep(syncWithin)
	for _, s := range sessions {
		for turn := range 2 {
			if got := served(b, s); got != onA[s] {
				t.Errorf("%s: session %s turn %d through B went to key %s; A pinned it to %s", driver, s, turn, got, onA[s])
			}
		}
	}
}
