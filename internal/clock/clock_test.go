package clock

import (
	"testing"
	"time"
)

func TestFakeMovesOnlyWhenAdvanced(t *testing.T) {
	t0 := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	c := NewFake(t0)
	if got := c.Now(); !got.Equal(t0) {
		t.Fatalf("Now = %v, want %v", got, t0)
	}
	c.Advance(90 * time.Second)
	if got, want := c.Now(), t0.Add(90*time.Second); !got.Equal(want) {
		t.Fatalf("after Advance: Now = %v, want %v", got, want)
	}
}

func TestUTCDay(t *testing.T) {
	for _, s := range []string{
		"2026-12-01T00:00:00Z", "2026-12-01T23:59:59.999Z", "2026-12-02T00:00:00Z",
		"2026-12-01T23:30:00-05:00", "1969-12-31T23:59:59Z", "1970-01-01T00:00:00Z", "2026-12-01T12:00:00Z",
	} {
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		// Twice: the second answer comes from the kept one.
		for range 2 {
			if got, want := UTCDay(tm), tm.UTC().Format(time.DateOnly); got != want {
				t.Errorf("UTCDay(%s) = %s, want %s", s, got, want)
			}
		}
	}
}
