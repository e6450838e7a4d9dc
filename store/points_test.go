package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/ccload/ccload/store"
)

// testLogPoints: EachLogPoint returns exactly the rows of the half-open
// range, oldest first, with the fields the stats need, and stops on fn's
// error.
func testLogPoints(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	rows := insert(t, s, makeRows(40)) // one row every 7 s from base
	since, until := base.Add(70*time.Second), base.Add(140*time.Second)
	var got []store.LogPoint
	err := s.EachLogPoint(ctxFor(t), since, until, func(p store.LogPoint) error {
		got = append(got, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var want []store.LogRow
	for _, r := range rows {
		// Bounds compare at the stored millisecond precision.
		if !r.Time.Before(since.Truncate(time.Millisecond)) && r.Time.Before(until.Truncate(time.Millisecond)) {
			want = append(want, r)
		}
	}
	if len(got) != len(want) || len(want) == 0 {
		t.Fatalf("got %d points, want %d", len(got), len(want))
	}
	for i, p := range got {
		r := want[i]
		if !p.Time.Equal(r.Time) || p.Token != r.Token || p.Channel != r.Channel || p.Model != r.Model ||
			p.Status != r.Status || p.TTFBMs != r.TTFBMs || p.DurationMs != r.DurationMs ||
			p.InputTokens != r.InputTokens || p.OutputTokens != r.OutputTokens ||
			p.CacheReadTokens != r.CacheReadTokens || p.CacheWriteTokens != r.CacheWriteTokens || p.Cost != r.Cost {
			t.Errorf("point %d = %+v, want row %+v", i, p, r)
		}
		if p.IsError() != r.IsError() {
			t.Errorf("point %d IsError %v, row %v", i, p.IsError(), r.IsError())
		}
	}

	stop := errors.New("stop")
	n := 0
	err = s.EachLogPoint(ctxFor(t), base, base.Add(time.Hour), func(store.LogPoint) error {
		n++
		if n == 3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 3 {
		t.Fatalf("stop: err %v after %d points", err, n)
	}
}

// testLogPointsAfter: EachLogPointAfter returns the rows of the range with an
// ID above the cursor, in ID order, and LogPointDigest counts and sums the IDs
// of the rows of the range at or below a cursor.
func testLogPointsAfter(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	insert(t, s, makeRows(40)) // one row every 7 s from base
	since, until := base.Add(70*time.Second), base.Add(140*time.Second)
	var all []store.LogPoint
	if err := s.EachLogPoint(ctxFor(t), since, until, func(p store.LogPoint) error {
		all = append(all, p)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(all) < 4 {
		t.Fatalf("only %d points", len(all))
	}
	cursor := all[len(all)/2].ID
	var want []store.LogPoint
	var n, sum int64
	for _, p := range all {
		if p.ID > cursor {
			want = append(want, p)
		} else {
			n, sum = n+1, sum+p.ID
		}
	}
	var got []store.LogPoint
	if err := s.EachLogPointAfter(ctxFor(t), since, until, cursor, func(p store.LogPoint) error {
		got = append(got, p)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("after %d: got %d points, want %d", cursor, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] || (i > 0 && got[i].ID <= got[i-1].ID) {
			t.Errorf("after %d: point %d = %+v, want %+v", cursor, i, got[i], want[i])
		}
	}
	gn, gsum, err := s.LogPointDigest(ctxFor(t), since, until, cursor)
	if err != nil || gn != n || gsum != sum {
		t.Fatalf("digest: %d %d %v, want %d %d", gn, gsum, err, n, sum)
	}
	if gn, gsum, err := s.LogPointDigest(ctxFor(t), until, until.Add(time.Second), cursor); err != nil || gn != 0 || gsum != 0 {
		t.Fatalf("empty digest: %d %d %v", gn, gsum, err)
	}
}
