package account

import (
	"bytes"
	"testing"
	"time"

	"github.com/ccload/ccload/store"
)

// An account whose row another instance has claimed for a refresh shows as
// refreshing until the claim ends, in every process that reads the rows.
func TestDescribeShowsAnotherInstancesRefresh(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	blob, err := Seal(key, "chatgpt", "alice", Credential{AccessToken: "at", RefreshToken: "rt"})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	row := store.Account{Channel: "chatgpt", Account: "alice", Provider: "codex", Credential: blob, State: store.AccountOK}
	for _, tc := range []struct {
		claimedUntil time.Time
		want         string
	}{
		{time.Time{}, StateOK},
		{now.Add(30 * time.Second), StateRefreshing},
		{now.Add(-time.Second), StateOK}, // a lapsed claim: its holder died
	} {
		row.ClaimedUntil = tc.claimedUntil
		if got := describe(row, key, now, nil).State; got != tc.want {
			t.Errorf("claimed until %v: state %q, want %q", tc.claimedUntil, got, tc.want)
		}
	}
}
