package store_test

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccload/ccload/protocol"
	"github.com/ccload/ccload/store"
)

// Opener opens a Store on the database that belongs to t, creating that
// database on first use for t and dropping it when t ends. Calling it again
// with the same t opens the same database again. It reports failures with
// t.Errorf and returns nil, so it may be called from any goroutine.
type Opener func(t *testing.T) store.Store

// RunSuite is the conformance suite every dialect must pass (STYLE.md
// practice 21). Each subtest runs in parallel on a database of its own.
func RunSuite(t *testing.T, open Opener) {
	tests := []struct {
		name string
		fn   func(t *testing.T, open Opener)
	}{
		{"migrations_idempotent", testMigrationsIdempotent},
		{"concurrent_open", testConcurrentOpen},
		{"insert_round_trip", testInsertRoundTrip},
		{"implied_attempts", testImpliedAttempts},
		{"usage_daily_sums", testUsageDailySums},
		{"query_filters", testQueryFilters},
		{"query_pagination", testQueryPagination},
		{"query_filters_many_batches", testFiltersManyBatches},
		{"log_points", testLogPoints},
		{"log_points_after", testLogPointsAfter},
		{"text_limits", testTextLimits},
		{"cooldowns", testCooldowns},
		{"overrides", testOverrides},
		{"shared_feed", testSharedFeed},
		{"shared_listen", testSharedListen},
		{"shared_spend", testSharedSpend},
		{"shared_spend_seed", testSharedSpendSeed},
		{"prune", testPrune},
		{"debug_capture", testDebugCapture},
		{"prune_debug", testPruneDebug},
		{"retention", testRetention},
		{"ping_close", testPingClose},
		{"catalog_copy", testCatalogCopy},
		{"admin_sessions", testAdminSessions},
		{"instances", testInstances},
		{"accounts", testAccounts},
		{"account_lock", testAccountLock},
		{"writer_drains_on_close", testWriterDrainsOnClose},
		{"writer_keeps_rows_during_outage", testWriterOutage},
		{"writer_counts_drops_when_full", testWriterDrops},
		{"writer_rejects_refused_row", testWriterRejects},
		{"writer_close_gives_up_on_dead_store", testWriterGivesUp},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, open)
		})
	}
}

// mustOpen is open for the test's own goroutine.
func mustOpen(t *testing.T, open Opener) store.Store {
	t.Helper()
	s := open(t)
	if s == nil {
		t.FailNow()
	}
	return s
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// base is a minute before a UTC midnight, with nanoseconds, so that test
// rows cross a day and lose sub-millisecond precision.
var base = time.Date(2026, 11, 29, 23, 59, 0, 123456789, time.UTC)

// makeRows returns n varied rows starting at base, one every 7 seconds.
// Names are lowercase letters only so that every database collation orders
// them the same way.
func makeRows(n int) []store.LogRow {
	tokens := []string{"alice", "bob"}
	channels := []string{"alpha", "beta", "gamma"}
	models := []string{"opus", "sonnet"}
	statuses := []int{200, 429, 200, 500, 404, 201, 0, 503, 200}
	scopes := map[int]string{429: "key", 500: "model", 503: "model", 404: "model", 0: "url"}
	rows := make([]store.LogRow, n)
	for i := range rows {
		st := statuses[i%len(statuses)]
		rows[i] = store.LogRow{
			Time:             base.Add(time.Duration(i) * 7 * time.Second),
			RequestID:        fmt.Sprintf("req-%04d", i),
			Token:            tokens[i%len(tokens)],
			Channel:          channels[i%len(channels)],
			KeyFP:            fmt.Sprintf("sk-a…%04x", i%5),
			URL:              "https://api.example.com/v1",
			ClientProtocol:   "anthropic",
			UpstreamProtocol: "openai",
			Model:            models[i%len(models)],
			UpstreamModel:    models[i%len(models)] + "-2026",
			Status:           st,
			FailureScope:     scopes[st],
			Attempts:         1 + i%3,
			AttemptsJSON:     fmt.Sprintf(`[{"n":%d,"status":%d}]`, i, st),
			TTFBMs:           int64(100 + i),
			DurationMs:       int64(1000 + 10*i),
			InputTokens:      int64(1000 + i),
			OutputTokens:     int64(200 + i),
			CacheReadTokens:  int64(50 * (i % 4)),
			CacheWriteTokens: int64(10 * (i % 3)),
			ReasoningTokens:  int64(i % 7),
			Cost:             0.001 * float64(i+1),
			Stream:           i%2 == 0,
			Incomplete:       i%11 == 0,
			ClientIP:         "192.0.2.7",
			Unpriced:         i%5 == 3,
		}
		if st >= 400 || st == 0 {
			rows[i].FailureKind = "server"
			rows[i].Error = fmt.Sprintf("upstream said %d — «ошибка»", st)
		}
	}
	return rows
}

// insert writes rows and returns them as stored (with IDs), oldest first.
func insert(t *testing.T, s store.Store, rows []store.LogRow) []store.LogRow {
	t.Helper()
	ctx := ctxFor(t)
	if err := s.InsertLogs(ctx, rows); err != nil {
		t.Fatalf("InsertLogs: %v", err)
	}
	return allLogs(t, s)
}

// allLogs returns every stored row, oldest first.
func allLogs(t *testing.T, s store.Store) []store.LogRow {
	t.Helper()
	var all []store.LogRow
	q := store.LogQuery{Limit: store.MaxLogLimit}
	for {
		page, err := s.QueryLogs(ctxFor(t), q)
		if err != nil {
			t.Fatalf("QueryLogs: %v", err)
		}
		all = append(all, page...)
		if len(page) < q.Limit {
			break
		}
		q.BeforeID = page[len(page)-1].ID
	}
	slices.Reverse(all)
	return all
}

func ids(rows []store.LogRow) []int64 {
	out := make([]int64, len(rows))
	for i, r := range rows {
		out[i] = r.ID
	}
	return out
}

func testMigrationsIdempotent(t *testing.T, open Opener) {
	ctx := ctxFor(t)
	s1 := mustOpen(t, open)
	v1, err := s1.SchemaVersion(ctx)
	if err != nil || v1 < 1 {
		t.Fatalf("SchemaVersion = %d, %v; want >= 1", v1, err)
	}
	insert(t, s1, makeRows(3))
	s2 := mustOpen(t, open) // same database: migrations must be a no-op
	v2, err := s2.SchemaVersion(ctx)
	if err != nil || v2 != v1 {
		t.Fatalf("SchemaVersion after reopen = %d, %v; want %d", v2, err, v1)
	}
	if got := allLogs(t, s2); len(got) != 3 {
		t.Fatalf("after reopen: %d rows, want the 3 written before", len(got))
	}
	if s1.Driver() != s2.Driver() || s1.Driver() == "" {
		t.Fatalf("Driver() = %q and %q", s1.Driver(), s2.Driver())
	}
}

// testConcurrentOpen opens a brand-new database from several goroutines at
// once, as several ccload instances starting together would.
func testConcurrentOpen(t *testing.T, open Opener) {
	const n = 4
	stores := make([]store.Store, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { stores[i] = open(t) })
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	want, _ := stores[0].SchemaVersion(ctxFor(t))
	for i, s := range stores {
		if v, err := s.SchemaVersion(ctxFor(t)); err != nil || v != want || v < 1 {
			t.Errorf("store %d: SchemaVersion = %d, %v; want %d", i, v, err, want)
		}
	}
	// Every instance can write: the schema is complete for all of them.
	for i, s := range stores {
		if err := s.InsertLogs(ctxFor(t), makeRows(2)); err != nil {
			t.Errorf("store %d: InsertLogs: %v", i, err)
		}
	}
	if got := allLogs(t, stores[0]); len(got) != 2*n {
		t.Errorf("%d rows, want %d", len(got), 2*n)
	}
}

func testInsertRoundTrip(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	if err := s.InsertLogs(ctxFor(t), nil); err != nil {
		t.Fatalf("InsertLogs(nil) = %v", err)
	}
	rows := makeRows(12)
	// A row in another zone: stored and returned as the same UTC instant.
	rows[3].Time = rows[3].Time.In(time.FixedZone("UTC+8", 8*3600))
	got := insert(t, s, rows)
	if len(got) != len(rows) {
		t.Fatalf("stored %d rows, want %d", len(got), len(rows))
	}
	for i := range rows {
		want := rows[i]
		want.ID = got[i].ID
		want.Time = want.Time.UTC().Truncate(time.Millisecond)
		if !got[i].Time.Equal(want.Time) || got[i].Time.Location() != time.UTC {
			t.Errorf("row %d: Time = %v, want %v in UTC", i, got[i].Time, want.Time)
		}
		gotCmp := got[i]
		gotCmp.Time, want.Time = time.Time{}, time.Time{}
		if !reflect.DeepEqual(gotCmp, want) {
			t.Errorf("row %d round trip:\n got %+v\nwant %+v", i, gotCmp, want)
		}
		if i > 0 && got[i].ID <= got[i-1].ID {
			t.Errorf("IDs not increasing in insertion order: %v", ids(got))
		}
	}
}

// A row answered by its first attempt does not store that attempt again
// (store/attempts.go): its attempts column is read back as the attempt its
// own columns describe, byte for byte as the engine wrote it. Any attempt
// the columns do not describe exactly is stored as given.
func testImpliedAttempts(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	base := makeRows(1)[0]
	base.Status, base.FailureKind, base.FailureScope, base.Error = 200, "", "", ""
	base.Channel, base.URL = `ch "quoted" <é>`, "http://127.0.0.1:8080/v1?a=1&b=2"
	attempt := func(r store.LogRow, extra string) string {
		enc := func(v string) string { return string(protocol.AppendJSONString(nil, v)) } // the engine's encoder
		return fmt.Sprintf(`[{"channel":%s,"key":%s,"url":%s,"protocol":%s,"upstream_model":%s,"status":%d%s,"duration_ms":%d}]`,
			enc(r.Channel), enc(r.KeyFP), enc(r.URL), enc(r.UpstreamProtocol), enc(r.UpstreamModel), r.Status, extra, r.DurationMs)
	}
	cases := []struct {
		name   string
		edit   func(r *store.LogRow)
		stored bool // the column keeps the JSON
	}{
		{"one attempt the row describes", func(r *store.LogRow) { r.AttemptsJSON = attempt(*r, "") }, false},
		{"a failed one with its kind and scope", func(r *store.LogRow) {
			r.Status, r.FailureKind, r.FailureScope = 502, "server", "url"
			r.AttemptsJSON = attempt(*r, `,"kind":"server","scope":"url"`)
		}, false},
		{"a duration of its own", func(r *store.LogRow) {
			r.AttemptsJSON = attempt(*r, "")
			r.DurationMs++
		}, true},
		{"conversion notes", func(r *store.LogRow) {
			r.AttemptsJSON = strings.TrimSuffix(attempt(*r, ""), "}]") + `,"notes":["top_k dropped"]}]`
		}, true},
		{"an error", func(r *store.LogRow) {
			r.AttemptsJSON = strings.TrimSuffix(attempt(*r, ""), "}]") + `,"error":"x"}]`
		}, true},
		{"two attempts", func(r *store.LogRow) { r.Attempts = 2; r.AttemptsJSON = "[" + attempt(*r, "")[1:] }, true},
		{"none recorded", func(r *store.LogRow) { r.Attempts = 0; r.AttemptsJSON = "" }, false},
	}
	rows := make([]store.LogRow, len(cases))
	for i, c := range cases {
		rows[i] = base
		rows[i].RequestID = fmt.Sprintf("implied-%d", i)
		c.edit(&rows[i])
	}
	got := insert(t, s, rows)
	if len(got) != len(rows) {
		t.Fatalf("stored %d rows, want %d", len(got), len(rows))
	}
	for i, c := range cases {
		if got[i].AttemptsJSON != rows[i].AttemptsJSON {
			t.Errorf("%s: read back %q, want %q", c.name, got[i].AttemptsJSON, rows[i].AttemptsJSON)
		}
		col, err := store.StoredAttempts(ctxFor(t), s, got[i].ID)
		if err != nil {
			t.Fatal(err)
		}
		if kept := col != ""; kept != c.stored && rows[i].AttemptsJSON != "" {
			t.Errorf("%s: column holds %q; want it stored: %v", c.name, col, c.stored)
		}
	}
}

// usageFromRows is the reference aggregation the database must match.
func usageFromRows(rows []store.LogRow) []store.UsageDay {
	type key struct{ day, token, channel, model string }
	m := map[key]*store.UsageDay{}
	for _, r := range rows {
		k := key{r.Time.UTC().Format(time.DateOnly), r.Token, r.Channel, r.Model}
		u := m[k]
		if u == nil {
			u = &store.UsageDay{Day: k.day, Token: k.token, Channel: k.channel, Model: k.model}
			m[k] = u
		}
		u.Requests++
		if r.Status < 200 || r.Status >= 400 {
			u.Errors++
		}
		u.InputTokens += r.InputTokens
		u.OutputTokens += r.OutputTokens
		u.CacheReadTokens += r.CacheReadTokens
		u.CacheWriteTokens += r.CacheWriteTokens
		u.Cost += r.Cost
	}
	var out []store.UsageDay
	for _, u := range m {
		out = append(out, *u)
	}
	slices.SortFunc(out, func(a, b store.UsageDay) int {
		return cmp.Or(cmp.Compare(a.Day, b.Day), cmp.Compare(a.Token, b.Token),
			cmp.Compare(a.Channel, b.Channel), cmp.Compare(a.Model, b.Model))
	})
	return out
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func sameUsage(got, want []store.UsageDay) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		g, w := got[i], want[i]
		if !near(g.Cost, w.Cost) {
			return false
		}
		g.Cost, w.Cost = 0, 0
		if g != w {
			return false
		}
	}
	return true
}

func testUsageDailySums(t *testing.T, open Opener) {
	ctx := ctxFor(t)
	s := mustOpen(t, open)
	rows := makeRows(40) // 40 rows × 7 s from 23:59:00 cross midnight UTC
	// Two calls: the second one must add to the aggregates of the first.
	insert(t, s, rows[:25])
	insert(t, s, rows[25:])
	want := usageFromRows(rows)
	if len(want) < 2 || want[0].Day == want[len(want)-1].Day {
		t.Fatalf("test data should span two days: %+v", want)
	}

	got, err := s.UsageDaily(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if !sameUsage(got, want) {
		t.Errorf("UsageDaily(\"\"):\n got %+v\nwant %+v", got, want)
	}
	secondDay := want[len(want)-1].Day
	got, err = s.UsageDaily(ctx, secondDay)
	if err != nil {
		t.Fatal(err)
	}
	var wantLater []store.UsageDay
	for _, u := range want {
		if u.Day >= secondDay {
			wantLater = append(wantLater, u)
		}
	}
	if !sameUsage(got, wantLater) {
		t.Errorf("UsageDaily(%s):\n got %+v\nwant %+v", secondDay, got, wantLater)
	}

	tokenCost := map[string]float64{}
	channelDayCost := map[[2]string]float64{}
	for _, u := range want {
		tokenCost[u.Token] += u.Cost
		channelDayCost[[2]string{u.Channel, u.Day}] += u.Cost
	}
	for tok, c := range tokenCost {
		if got, err := s.TokenCost(ctx, tok); err != nil || !near(got, c) {
			t.Errorf("TokenCost(%s) = %v, %v; want %v", tok, got, err, c)
		}
	}
	if got, err := s.TokenCost(ctx, "nobody"); err != nil || got != 0 {
		t.Errorf("TokenCost(nobody) = %v, %v; want 0", got, err)
	}
	for k, c := range channelDayCost {
		if got, err := s.ChannelCostOn(ctx, k[0], k[1]); err != nil || !near(got, c) {
			t.Errorf("ChannelCostOn(%s, %s) = %v, %v; want %v", k[0], k[1], got, err, c)
		}
	}
	if got, err := s.ChannelCostOn(ctx, "alpha", "1999-01-01"); err != nil || got != 0 {
		t.Errorf("ChannelCostOn on an empty day = %v, %v; want 0", got, err)
	}
	if _, err := s.ChannelCostOn(ctx, "alpha", "30/11/2026"); err == nil {
		t.Error("ChannelCostOn accepted a malformed day")
	}
	if _, err := s.UsageDaily(ctx, "yesterday"); err == nil {
		t.Error("UsageDaily accepted a malformed day")
	}
}

// filterRef is the reference implementation of LogQuery over stored rows.
func filterRef(all []store.LogRow, q store.LogQuery) []store.LogRow {
	var out []store.LogRow
	for i := len(all) - 1; i >= 0; i-- { // newest first
		r := all[i]
		switch {
		case !q.Since.IsZero() && r.Time.Before(q.Since.Truncate(time.Millisecond)),
			!q.Until.IsZero() && !r.Time.Before(q.Until.Truncate(time.Millisecond)),
			q.Token != "" && r.Token != q.Token,
			q.Channel != "" && r.Channel != q.Channel,
			q.Model != "" && r.Model != q.Model,
			q.FailureScope != "" && r.FailureScope != q.FailureScope,
			q.StatusClass != 0 && r.Status/100 != q.StatusClass,
			q.BeforeID > 0 && r.ID >= q.BeforeID:
			continue
		}
		out = append(out, r)
	}
	limit := q.Limit
	if limit <= 0 {
		limit = store.DefaultLogLimit
	}
	return out[:min(len(out), limit)]
}

func testQueryFilters(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	all := insert(t, s, makeRows(60))
	mid := all[30]
	cases := []struct {
		name string
		q    store.LogQuery
	}{
		{"everything", store.LogQuery{}},
		{"since_inclusive", store.LogQuery{Since: mid.Time}},
		{"until_exclusive", store.LogQuery{Until: mid.Time}},
		{"window", store.LogQuery{Since: all[10].Time, Until: all[20].Time}},
		{"token", store.LogQuery{Token: "bob"}},
		{"channel", store.LogQuery{Channel: "gamma"}},
		{"model", store.LogQuery{Model: "sonnet"}},
		{"failure_scope", store.LogQuery{FailureScope: "model"}},
		{"status_2xx", store.LogQuery{StatusClass: 2}},
		{"status_4xx", store.LogQuery{StatusClass: 4}},
		{"status_5xx", store.LogQuery{StatusClass: 5}},
		{"combined", store.LogQuery{Token: "alice", Channel: "alpha", StatusClass: 2, Since: all[5].Time}},
		{"before_id", store.LogQuery{BeforeID: mid.ID}},
		{"limit", store.LogQuery{Limit: 7}},
		{"no_match", store.LogQuery{Token: "nobody"}},
	}
	for _, c := range cases {
		got, err := s.QueryLogs(ctxFor(t), c.q)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		want := filterRef(all, c.q)
		if !slices.Equal(ids(got), ids(want)) {
			t.Errorf("%s: got IDs %v, want %v", c.name, ids(got), ids(want))
		}
		if c.name != "no_match" && len(want) == 0 {
			t.Errorf("%s: test data matches nothing, the case proves little", c.name)
		}
	}
	for _, bad := range []int{-1, 6, 42} {
		if _, err := s.QueryLogs(ctxFor(t), store.LogQuery{StatusClass: bad}); err == nil {
			t.Errorf("StatusClass %d accepted", bad)
		}
	}
}

func testQueryPagination(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	all := insert(t, s, makeRows(store.DefaultLogLimit+25))

	page, err := s.QueryLogs(ctxFor(t), store.LogQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page) != store.DefaultLogLimit || page[0].ID != all[len(all)-1].ID {
		t.Fatalf("default page: %d rows starting at %d; want %d starting at the newest, %d",
			len(page), page[0].ID, store.DefaultLogLimit, all[len(all)-1].ID)
	}
	if got, _ := s.QueryLogs(ctxFor(t), store.LogQuery{Limit: 1 << 20}); len(got) != len(all) {
		t.Errorf("huge Limit: %d rows, want all %d (cap is %d)", len(got), len(all), store.MaxLogLimit)
	}

	// Walk every page of one token's rows; the walk must visit each once, in order.
	for _, limit := range []int{1, 10, 33} {
		q := store.LogQuery{Token: "alice", Limit: limit}
		var seen []store.LogRow
		for pages := 0; ; pages++ {
			if pages > len(all) {
				t.Fatalf("limit %d: pagination does not end", limit)
			}
			page, err := s.QueryLogs(ctxFor(t), q)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) > limit {
				t.Fatalf("limit %d: page of %d", limit, len(page))
			}
			seen = append(seen, page...)
			if len(page) < limit {
				break
			}
			q.BeforeID = page[len(page)-1].ID
		}
		want := filterRef(all, store.LogQuery{Token: "alice", Limit: len(all)})
		if !slices.Equal(ids(seen), ids(want)) {
			t.Errorf("limit %d: walked %v, want %v", limit, ids(seen), ids(want))
		}
	}
}

// testTextLimits feeds what a misbehaving client could put in a log row:
// it must be stored (cut, made valid), never fail the batch.
func testTextLimits(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	r := makeRows(1)[0]
	r.Model = strings.Repeat("é", 1000)
	r.Token = "bad\xff\xfeutf8"
	r.Error = "nul\x00byte " + strings.Repeat("x", 100000)
	r.URL = "https://" + strings.Repeat("u", 5000)
	r.AttemptsJSON = `[{"e":"` + strings.Repeat("a", 200000) + `"}]`
	r.Cost = math.NaN()
	got := insert(t, s, []store.LogRow{r})
	if len(got) != 1 {
		t.Fatalf("stored %d rows", len(got))
	}
	g := got[0]
	if n := len([]rune(g.Model)); n != 128 || g.Model[:2] != "é" {
		t.Errorf("Model kept %d characters (%q…), want 128 é", n, g.Model[:4])
	}
	if g.Token != "bad\uFFFDutf8" {
		t.Errorf("Token = %q, want invalid bytes replaced", g.Token)
	}
	if !strings.HasPrefix(g.Error, "nulbyte xxx") || len(g.Error) != 4096 {
		t.Errorf("Error = %.20q… (%d bytes), want NUL removed and cut to 4096", g.Error, len(g.Error))
	}
	if len(g.URL) != 400 {
		t.Errorf("URL has %d characters, want 400", len(g.URL))
	}
	if g.AttemptsJSON != r.AttemptsJSON {
		t.Errorf("AttemptsJSON changed (%d bytes, want %d): it must never be cut", len(g.AttemptsJSON), len(r.AttemptsJSON))
	}
	if g.Cost != 0 {
		t.Errorf("NaN cost stored as %v, want 0", g.Cost)
	}
	if c, err := s.TokenCost(ctxFor(t), g.Token); err != nil || c != 0 {
		t.Errorf("TokenCost after NaN = %v, %v; want 0", c, err)
	}
}

func testCooldowns(t *testing.T, open Opener) {
	ctx := ctxFor(t)
	s := mustOpen(t, open)
	now := base
	keyCD := store.Cooldown{CooldownKey: store.CooldownKey{Scope: store.ScopeKey, Channel: "alpha", KeyFP: "sk-a…f3c9"},
		Until: now.Add(5 * time.Minute), Strikes: 1, Kind: "auth", Reason: "401 invalid key"}
	modelCD := store.Cooldown{CooldownKey: store.CooldownKey{Scope: store.ScopeModel, Channel: "alpha", Model: "opus"},
		Until: now.Add(time.Minute), Strikes: 2, Kind: "server", Reason: "529 overloaded"}
	urlCD := store.Cooldown{CooldownKey: store.CooldownKey{Scope: store.ScopeURL, Channel: "beta", URL: "https://relay.example.com/api"},
		Until: now.Add(-time.Second), Strikes: 1, Kind: "timeout", Reason: "expired already"}
	chanCD := store.Cooldown{CooldownKey: store.CooldownKey{Scope: store.ScopeChannel, Channel: "gamma"},
		Until: now.Add(time.Hour), Strikes: 3, Kind: "server", Reason: "所有模型冷却中"}
	for _, c := range []store.Cooldown{keyCD, modelCD, urlCD, chanCD} {
		if err := s.UpsertCooldown(ctx, c); err != nil {
			t.Fatalf("UpsertCooldown(%+v): %v", c.CooldownKey, err)
		}
	}
	list := func(at time.Time) []store.Cooldown {
		t.Helper()
		got, err := s.ListCooldowns(ctx, at)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	trunc := func(cs ...store.Cooldown) []store.Cooldown {
		for i := range cs {
			cs[i].Until = cs[i].Until.UTC().Truncate(time.Millisecond)
		}
		return cs
	}
	// Ordered by scope, channel, key_fp, model, url; the expired URL cooldown is not listed.
	if got, want := list(now), trunc(chanCD, keyCD, modelCD); !reflect.DeepEqual(got, want) {
		t.Errorf("ListCooldowns(now):\n got %+v\nwant %+v", got, want)
	}
	if got, want := list(now.Add(2*time.Minute)), trunc(chanCD, keyCD); !reflect.DeepEqual(got, want) {
		t.Errorf("ListCooldowns(now+2m): model cooldown should have expired:\n got %+v\nwant %+v", got, want)
	}
	if got := list(now.Add(-time.Hour)); len(got) != 4 {
		t.Errorf("ListCooldowns(now-1h): %d, want 4 (the expired one is still stored)", len(got))
	}

	// Upsert replaces: same key, new state; the count stays.
	modelCD.Until, modelCD.Strikes, modelCD.Reason = now.Add(10*time.Minute), 3, "still overloaded"
	if err := s.UpsertCooldown(ctx, modelCD); err != nil {
		t.Fatal(err)
	}
	if got, want := list(now), trunc(chanCD, keyCD, modelCD); !reflect.DeepEqual(got, want) {
		t.Errorf("after re-upsert:\n got %+v\nwant %+v", got, want)
	}

	if err := s.DeleteCooldown(ctx, keyCD.CooldownKey); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteCooldown(ctx, keyCD.CooldownKey); err != nil {
		t.Errorf("deleting a missing cooldown: %v, want nil", err)
	}
	if got, want := list(now), trunc(chanCD, modelCD); !reflect.DeepEqual(got, want) {
		t.Errorf("after delete:\n got %+v\nwant %+v", got, want)
	}

	bad := []store.CooldownKey{
		{Scope: "planet", Channel: "alpha"},
		{Scope: "", Channel: "alpha"},
		{Scope: store.ScopeURL, Channel: "alpha", URL: "https://" + strings.Repeat("u", 500)},
		{Scope: store.ScopeModel, Channel: "alpha", Model: "bad\xffmodel"},
	}
	for _, k := range bad {
		if err := s.UpsertCooldown(ctx, store.Cooldown{CooldownKey: k, Until: now.Add(time.Minute)}); err == nil {
			t.Errorf("UpsertCooldown accepted bad key %+.60v", k)
		}
	}
	// The longest key every part allows fits every dialect's unique index.
	long := store.Cooldown{CooldownKey: store.CooldownKey{Scope: store.ScopeURL,
		Channel: strings.Repeat("č", 128), KeyFP: strings.Repeat("k", 64),
		Model: strings.Repeat("м", 128), URL: "https://" + strings.Repeat("ü", 392)}, Until: now.Add(time.Minute)}
	if err := s.UpsertCooldown(ctx, long); err != nil {
		t.Errorf("UpsertCooldown with the longest key: %v", err)
	}
}

func testOverrides(t *testing.T, open Opener) {
	ctx := ctxFor(t)
	s := mustOpen(t, open)
	at := base.Add(-time.Hour).Truncate(time.Millisecond)
	set := []store.Override{
		{Kind: "pause", Target: "beta", Value: "maintenance", CreatedAt: at},
		{Kind: "pause", Target: "alpha", Value: "", CreatedAt: at},
		{Kind: "clear_cooldown", Target: "alpha/opus", Value: `{"by":"admin"}`, CreatedAt: at},
	}
	for _, o := range set {
		if err := s.SetOverride(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	// Replace one; a zero CreatedAt becomes "now".
	before := time.Now().Add(-time.Second)
	if err := s.SetOverride(ctx, store.Override{Kind: "pause", Target: "beta", Value: "back at 5"}); err != nil {
		t.Fatal(err)
	}
	got, err := s.ListOverrides(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("ListOverrides: %+v, want 3", got)
	}
	if got[2].CreatedAt.Before(before) {
		t.Errorf("replaced override CreatedAt = %v, want about now", got[2].CreatedAt)
	}
	got[2].CreatedAt = at
	want := []store.Override{
		{Kind: "clear_cooldown", Target: "alpha/opus", Value: `{"by":"admin"}`, CreatedAt: at},
		{Kind: "pause", Target: "alpha", Value: "", CreatedAt: at},
		{Kind: "pause", Target: "beta", Value: "back at 5", CreatedAt: at},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ListOverrides:\n got %+v\nwant %+v", got, want)
	}
	if err := s.DeleteOverride(ctx, "pause", "alpha"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteOverride(ctx, "pause", "alpha"); err != nil {
		t.Errorf("deleting a missing override: %v", err)
	}
	if got, _ := s.ListOverrides(ctx); len(got) != 2 {
		t.Errorf("after delete: %+v, want 2", got)
	}
	if err := s.SetOverride(ctx, store.Override{Kind: "", Target: "x"}); err == nil {
		t.Error("SetOverride accepted an empty kind")
	}
}

func testPrune(t *testing.T, open Opener) {
	ctx := ctxFor(t)
	s := mustOpen(t, open)
	// More old rows than one prune batch (5000), so the batching loop runs.
	old := makeRows(5200)
	for i := range old {
		old[i].Time = base.Add(-30*24*time.Hour + time.Duration(i)*time.Millisecond)
	}
	recent := makeRows(30)
	if err := s.InsertLogs(ctx, old); err != nil {
		t.Fatal(err)
	}
	if err := s.InsertLogs(ctx, recent); err != nil {
		t.Fatal(err)
	}
	usageBefore, err := s.UsageDaily(ctx, "")
	if err != nil {
		t.Fatal(err)
	}

	cutoff := recent[0].Time // exclusive: the row exactly at the cutoff stays
	n, err := s.PruneLogs(ctx, cutoff)
	if err != nil || n != int64(len(old)) {
		t.Fatalf("PruneLogs = %d, %v; want %d", n, err, len(old))
	}
	left := allLogs(t, s)
	if len(left) != len(recent) || left[0].RequestID != recent[0].RequestID {
		t.Errorf("after prune: %d rows (first %q), want the %d recent ones", len(left), left[0].RequestID, len(recent))
	}
	if n, err := s.PruneLogs(ctx, cutoff); err != nil || n != 0 {
		t.Errorf("second PruneLogs = %d, %v; want 0", n, err)
	}
	usageAfter, err := s.UsageDaily(ctx, "")
	if err != nil || !sameUsage(usageAfter, usageBefore) {
		t.Errorf("PruneLogs changed usage_daily (%v)", err)
	}
}

func testPingClose(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	if err := s.Ping(ctxFor(t)); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Ping(ctxFor(t)); err == nil {
		t.Error("Ping after Close succeeded")
	}
	if err := s.InsertLogs(ctxFor(t), makeRows(1)); err == nil {
		t.Error("InsertLogs after Close succeeded")
	}
}
