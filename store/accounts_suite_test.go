package store_test

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ccload/ccload/store"
)

// testAccounts: put, list, lock and delete an account row; the credential
// comes back byte for byte and every write bumps the version.
func testAccounts(t *testing.T, open Opener) {
	s := open(t)
	ctx := context.Background()
	exp := time.Now().Add(time.Hour).Truncate(time.Millisecond).UTC()
	a := store.Account{Channel: "chatgpt", Account: "alice", Provider: "codex", Credential: []byte{0, 1, 2, 0xff, 0},
		SubjectFP: "acct…1234", AccessExpires: exp}
	if err := s.PutAccount(ctx, a); err != nil {
		t.Fatal(err)
	}
	list, err := s.ListAccounts(ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("list = %v, %v", list, err)
	}
	got := list[0]
	if string(got.Credential) != string(a.Credential) || !got.AccessExpires.Equal(exp) || got.State != store.AccountOK ||
		got.Version != 1 || !got.LastRefresh.IsZero() || !got.ExhaustedUntil.IsZero() || !got.ClaimedUntil.IsZero() {
		t.Fatalf("round trip: %+v", got)
	}
	a.Credential = []byte("new")
	if err := s.PutAccount(ctx, a); err != nil {
		t.Fatal(err)
	}
	reset := time.Now().Add(30 * time.Minute).Truncate(time.Millisecond).UTC()
	if err := s.SetAccountQuota(ctx, "chatgpt", "alice", reset, `{"primary":{"used_percent":100}}`); err != nil {
		t.Fatal(err)
	}
	err = s.LockAccount(ctx, "chatgpt", "alice", func(a store.Account, found bool) (store.Account, bool, error) {
		if !found || a.Version != 3 || string(a.Credential) != "new" || !a.ExhaustedUntil.Equal(reset) {
			t.Errorf("locked row: found %v %+v", found, a)
		}
		// Every reader sees the claim while the refresh runs ("refreshing"
		// in ccload accounts, whichever instance asks).
		if l, err := s.ListAccounts(ctx); err != nil || len(l) != 1 || !l[0].ClaimedUntil.After(time.Now()) {
			t.Errorf("during the refresh: list %+v, %v; want the claim's end in the future", l, err)
		}
		a.State, a.Reason = store.AccountInvalid, "refresh_token_reused"
		return a, true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	list, _ = s.ListAccounts(ctx)
	if list[0].State != store.AccountInvalid || list[0].Reason != "refresh_token_reused" || list[0].Version != 4 || !list[0].ClaimedUntil.IsZero() {
		t.Fatalf("after lock: %+v", list[0])
	}
	if err := s.LockAccount(ctx, "chatgpt", "nobody", func(_ store.Account, found bool) (store.Account, bool, error) {
		if found {
			t.Error("found a missing account")
		}
		return store.Account{}, true, nil
	}); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if err := s.InsertLogs(ctx, []store.LogRow{
		{Time: now, Channel: "chatgpt", KeyFP: "account:alice", Status: 200, Cost: 0.25, Model: "m", Token: "t"},
		{Time: now, Channel: "chatgpt", KeyFP: "account:alice", Status: 200, Cost: 0.5, Model: "m", Token: "t"},
		{Time: now, Channel: "chatgpt", KeyFP: "sk-a…ffff#12345678", Status: 200, Cost: 9, Model: "m", Token: "t"},
		{Time: now.Add(-48 * time.Hour), Channel: "chatgpt", KeyFP: "account:alice", Status: 200, Cost: 9, Model: "m", Token: "t"},
	}); err != nil {
		t.Fatal(err)
	}
	use, err := s.AccountUsage(ctx, now.Add(-time.Hour))
	if u := use[[2]string{"chatgpt", "alice"}]; err != nil || len(use) != 1 || u.Requests != 2 || u.Cost != 0.75 {
		t.Fatalf("account usage = %v, %v", use, err)
	}
	if ok, err := s.DeleteAccount(ctx, "chatgpt", "alice"); !ok || err != nil {
		t.Fatalf("delete = %v, %v", ok, err)
	}
	if list, _ = s.ListAccounts(ctx); len(list) != 0 {
		t.Fatalf("after delete: %+v", list)
	}
}

// testAccountLock: LockAccount holders never overlap, across two handles
// on one database (two instances): a read-modify-write of a counter in the
// row loses no update.
func testAccountLock(t *testing.T, open Opener) {
	s1, s2 := open(t), open(t)
	ctx := context.Background()
	if err := s1.PutAccount(ctx, store.Account{Channel: "c", Account: "a", Provider: "codex", Credential: []byte("0")}); err != nil {
		t.Fatal(err)
	}
	var inside, overlaps atomic.Int32
	var wg sync.WaitGroup
	const n = 8
	for i := range n {
		s := s1
		if i%2 == 1 {
			s = s2
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.LockAccount(ctx, "c", "a", func(a store.Account, _ bool) (store.Account, bool, error) {
				if inside.Add(1) > 1 {
					overlaps.Add(1)
				}
				defer inside.Add(-1)
				v, _ := strconv.Atoi(string(a.Credential))
				time.Sleep(5 * time.Millisecond) // widen the window a lost update needs
				a.Credential = []byte(strconv.Itoa(v + 1))
				return a, true, nil
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	list, _ := s1.ListAccounts(ctx)
	if len(list) != 1 || string(list[0].Credential) != strconv.Itoa(n) || overlaps.Load() != 0 {
		t.Fatalf("counter %q after %d locked increments, %d overlaps", list[0].Credential, n, overlaps.Load())
	}
}
