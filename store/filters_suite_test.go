package store_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/ccload/ccload/store"
)

// spreadRows returns n rows in time order whose token, channel and model
// are skewed: common values, a value in a handful of rows far apart, and
// empty ones. One row in 40 carries a debug capture, which InsertLogs
// writes on its own.
func spreadRows(rng *rand.Rand, n int) []store.LogRow {
	pick := func(common []string) string {
		switch x := rng.IntN(100); {
		case x < 3:
			return ""
		case x < 4 && rng.IntN(8) == 0:
			return "rare"
		default:
			return common[rng.IntN(len(common))]
		}
	}
	rows := makeRows(n)
	for i := range rows {
		rows[i].Time = base.Add(time.Duration(i) * 250 * time.Millisecond)
		rows[i].Token = pick([]string{"alice", "bob", "carol"})
		rows[i].Channel = pick([]string{"alpha", "beta"})
		rows[i].Model = pick([]string{"opus", "sonnet", "haiku", "gpt"})
		rows[i].Debug = ""
		if rng.IntN(40) == 0 {
			rows[i].Debug = fmt.Sprintf(`{"n":%d}`, i)
		}
	}
	return rows
}

// insertSpread inserts rows in batches of random sizes, some larger than
// the Writer's and crossing 1024-ID blocks, and returns every stored row,
// oldest first.
func insertSpread(t *testing.T, s store.Store, rng *rand.Rand, rows []store.LogRow) []store.LogRow {
	t.Helper()
	for len(rows) > 0 {
		n := min(len(rows), 1+rng.IntN(1300))
		if err := s.InsertLogs(ctxFor(t), rows[:n]); err != nil {
			t.Fatalf("InsertLogs(%d rows): %v", n, err)
		}
		rows = rows[n:]
	}
	return allLogs(t, s)
}

// filterQueries are the queries testFiltersManyBatches compares with the
// reference: every combination of the filters on a few values, cursors in
// the middle of the log and at block edges, windows and page sizes.
func filterQueries(all []store.LogRow) []store.LogQuery {
	mid := all[len(all)/2]
	var cursors = []int64{0, mid.ID, all[0].ID + 1024, all[len(all)-1].ID}
	var qs []store.LogQuery
	for _, token := range []string{"", "alice", "rare", "nobody"} {
		for _, channel := range []string{"", "beta", "rare"} {
			for _, model := range []string{"", "haiku"} {
				for _, before := range cursors {
					for _, limit := range []int{5, 400} {
						q := store.LogQuery{Token: token, Channel: channel, Model: model, BeforeID: before, Limit: limit}
						qs = append(qs, q)
						w := q
						w.Since, w.Until, w.StatusClass = all[len(all)/5].Time, mid.Time, 2
						qs = append(qs, w)
					}
				}
			}
		}
	}
	return qs
}

// testFiltersManyBatches: filtered queries over a log written in many
// batches, with debug rows among them, give what a scan of every row
// gives. On SQLite the filters walk request_log_spans (spans.go), whose
// edges this exercises: values spread over many batches and ID blocks, a
// value in few rows, cursors inside and between spans.
func testFiltersManyBatches(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	rng := rand.New(rand.NewPCG(12, 6))
	all := insertSpread(t, s, rng, spreadRows(rng, 3500))
	if len(all) != 3500 {
		t.Fatalf("stored %d rows, want 3500", len(all))
	}
	if matched := checkFilters(t, s, all); matched < 100 {
		t.Errorf("only %d queries match any row; the data proves little", matched)
	}
	rare := filterRef(all, store.LogQuery{Token: "rare", Limit: len(all)})
	if len(rare) == 0 || len(rare) > 40 {
		t.Errorf("%d rows have token rare, want a handful", len(rare))
	}
}

// checkFilters compares QueryLogs with filterRef on filterQueries, walks
// one channel's rows page by page, and returns how many queries matched.
func checkFilters(t *testing.T, s store.Store, all []store.LogRow) int {
	t.Helper()
	matched := 0
	for _, q := range filterQueries(all) {
		got, err := s.QueryLogs(ctxFor(t), q)
		if err != nil {
			t.Fatalf("%+v: %v", q, err)
		}
		want := filterRef(all, q)
		if !slices.Equal(ids(got), ids(want)) {
			t.Fatalf("token %q channel %q model %q before %d limit %d since %v: got %d IDs %v, want %d %v",
				q.Token, q.Channel, q.Model, q.BeforeID, q.Limit, !q.Since.IsZero(), len(got), ids(got), len(want), ids(want))
		}
		if len(want) > 0 {
			matched++
		}
	}

	q := store.LogQuery{Channel: "beta", Limit: 97}
	var seen []store.LogRow
	for pages := 0; ; pages++ {
		if pages > len(all) {
			t.Fatal("pagination does not end")
		}
		page, err := s.QueryLogs(ctxFor(t), q)
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, page...)
		if len(page) < q.Limit {
			break
		}
		q.BeforeID = page[len(page)-1].ID
	}
	if want := filterRef(all, store.LogQuery{Channel: "beta", Limit: len(all)}); !slices.Equal(ids(seen), ids(want)) {
		t.Errorf("paging channel beta: %d rows, want %d", len(seen), len(want))
	}
	return matched
}
