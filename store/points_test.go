package store_test

import (
	"errors"
	"testing"
	"time"

	"ccload/store"
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
