// Command seed fills a ccload database with synthetic request logs, for the
// dashboard's page-load timing (webui/e2e): it writes -n rows spread over
// the last -span through store.InsertLogs, so usage_daily is filled as the
// gateway would fill it.
//
//	go run ./webui/e2e/seed -db /tmp/x.db -n 100000 -span 24h
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"github.com/ccload/ccload/store"
)

func main() {
	db := flag.String("db", "", "SQLite database file (created and migrated if missing)")
	n := flag.Int("n", 100000, "rows to insert")
	span := flag.Duration("span", 24*time.Hour, "spread the rows over this long before now")
	accounts := flag.String("accounts", "", "also store subscription accounts on this codex channel (seedAccounts)")
	secretKey := flag.String("secret-key", "", "server.secret_key the accounts are sealed with")
	flag.Parse()
	if *db == "" {
		fmt.Fprintln(os.Stderr, "seed: -db is required")
		os.Exit(2)
	}
	if err := run(*db, *n, *span, *accounts, *secretKey); err != nil {
		fmt.Fprintln(os.Stderr, "seed:", err)
		os.Exit(1)
	}
}

var (
	tokens   = []string{"alice", "bob", "ci", "alice", "alice"}
	channels = []struct{ name, proto string }{{"main", "anthropic"}, {"openai", "openai"}, {"flaky", "anthropic"}}
	models   = map[string][]string{
		"main":   {"claude-sonnet-4-6", "claude-opus-4-8", "claude-sonnet-4-6"},
		"openai": {"gpt-5", "gpt-5-mini"},
		"flaky":  {"claude-haiku-4-5-mock-fail-500"},
	}
	clients = []string{"anthropic", "openai", "responses", "anthropic"}
)

func run(db string, n int, span time.Duration, accounts, secretKey string) error {
	ctx := context.Background()
	st, err := store.Open(ctx, "sqlite", db)
	if err != nil {
		return err
	}
	defer st.Close()
	if accounts != "" {
		if err := seedAccounts(ctx, st, accounts, secretKey); err != nil {
			return err
		}
	}
	rng := rand.New(rand.NewPCG(1, 2)) // the same rows every run
	now := time.Now()
	const batch = 5000
	rows := make([]store.LogRow, 0, batch)
	start := time.Now()
	for i := range n {
		// Oldest first, as the gateway writes them: ids grow with time.
		t := now.Add(-span + time.Duration(float64(span)*float64(i)/float64(n)))
		rows = append(rows, row(rng, i, t))
		if len(rows) == batch || i == n-1 {
			if err := st.InsertLogs(ctx, rows); err != nil {
				return err
			}
			rows = rows[:0]
		}
	}
	if n == 0 {
		return nil
	}
	fmt.Printf("seed: %d rows over %s into %s in %s\n", n, span, db, time.Since(start).Round(time.Millisecond))
	return nil
}

type attempt struct {
	Channel       string `json:"channel"`
	Key           string `json:"key"`
	URL           string `json:"url"`
	Protocol      string `json:"protocol"`
	UpstreamModel string `json:"upstream_model"`
	Status        int    `json:"status"`
	Kind          string `json:"kind,omitempty"`
	Scope         string `json:"scope,omitempty"`
	DurationMs    int64  `json:"duration_ms"`
	Error         string `json:"error,omitempty"`
}

func row(rng *rand.Rand, i int, t time.Time) store.LogRow {
	ch := channels[rng.IntN(len(channels))]
	ms := models[ch.name]
	model := ms[rng.IntN(len(ms))]
	r := store.LogRow{
		Time: t, RequestID: fmt.Sprintf("seed-%06d", i), Token: tokens[rng.IntN(len(tokens))],
		Channel: ch.name, KeyFP: "seed…0001#5eed0001", URL: "http://127.0.0.1:9/" + ch.proto,
		ClientProtocol: clients[rng.IntN(len(clients))], UpstreamProtocol: ch.proto,
		Model: model, UpstreamModel: model, Attempts: 1, Stream: rng.IntN(3) > 0,
		ClientIP: "127.0.0.1",
	}
	a := attempt{Channel: ch.name, Key: r.KeyFP, URL: r.URL, Protocol: ch.proto, UpstreamModel: model}
	switch p := rng.IntN(100); {
	case ch.name == "flaky" || p < 3:
		r.Status, r.FailureKind, r.FailureScope, r.Error = 502, "server", "model", "upstream answered 500"
		a.Status, a.Kind, a.Scope, a.Error = 500, "server", "model", "500 server error"
	case p < 5:
		r.Status, r.FailureKind, r.FailureScope, r.Error = 429, "rate_limit", "key", "rate limited"
		a.Status, a.Kind, a.Scope = 429, "rate_limit", "key"
	default:
		r.Status = 200
		a.Status = 200
		r.TTFBMs = 150 + rng.Int64N(900)
		r.InputTokens = 200 + rng.Int64N(20000)
		r.OutputTokens = 20 + rng.Int64N(2000)
		r.CacheReadTokens = rng.Int64N(10000)
		r.Cost = float64(r.InputTokens)*3e-6 + float64(r.OutputTokens)*15e-6 + float64(r.CacheReadTokens)*0.3e-6
	}
	r.DurationMs = r.TTFBMs + 50 + rng.Int64N(8000)
	a.DurationMs = r.DurationMs
	b, _ := json.Marshal([]attempt{a})
	r.AttemptsJSON = string(b)
	return r
}
