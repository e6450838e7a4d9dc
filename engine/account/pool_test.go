package account_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine/account"
	"github.com/ccload/ccload/internal/clock"
	"github.com/ccload/ccload/store"
)

var testKey = []byte("0123456789abcdef0123456789abcdef")

func TestSealOpen(t *testing.T) {
	c := account.Credential{AccessToken: "at-secret", RefreshToken: "rt-secret", AccountID: "acct-1"}
	blob, err := account.Seal(testKey, "ch", "alice", c)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(blob), "secret") || strings.Contains(string(blob), "acct-1") {
		t.Fatal("sealed blob shows the plaintext")
	}
	got, err := account.Open(testKey, "ch", "alice", blob)
	if err != nil || got != c {
		t.Fatalf("open = %+v, %v", got, err)
	}
	if _, err := account.Open(testKey, "ch", "bob", blob); err != account.ErrUndecryptable {
		t.Errorf("blob opened under another account: %v", err)
	}
	other := []byte("fedcba9876543210fedcba9876543210")
	if _, err := account.Open(other, "ch", "alice", blob); err != account.ErrUndecryptable {
		t.Errorf("blob opened with another key: %v", err)
	}
	if s := strings.Join([]string{c.String(), c.GoString()}, ""); strings.Contains(s, "secret") {
		t.Errorf("Credential prints a token: %s", s)
	}
}

func TestRefreshMargin(t *testing.T) {
	for _, tc := range []struct{ life, want time.Duration }{
		{time.Hour, 12 * time.Minute}, {5 * time.Second, time.Second}, {10 * 24 * time.Hour, 2 * 24 * time.Hour},
	} {
		if got := account.RefreshMargin(tc.life); got != tc.want {
			t.Errorf("RefreshMargin(%v) = %v, want %v", tc.life, got, tc.want)
		}
	}
}

// env is a mock sign-in server with one signed-in Codex account, and a
// channel pointing at it.
type env struct {
	signin *mockupstream.SignIn
	clk    *clock.Fake
	ch     *config.Channel
}

func newEnv(t *testing.T, ttl time.Duration) *env {
	clk := clock.NewFake(time.Now().Truncate(time.Second))
	si := &mockupstream.SignIn{AccessTTL: ttl, Now: clk.Now, RefreshDelay: 30 * time.Millisecond}
	srv := httptest.NewServer(si)
	t.Cleanup(srv.Close)
	return &env{signin: si, clk: clk, ch: &config.Channel{Name: "chatgpt", OAuth: config.OAuthCodex, Accounts: []string{"alice"},
		OAuthIssuer: srv.URL, OAuthClientID: "app_test"}}
}

// signIn stores a fresh sign-in of account for alice.
func (e *env) signIn(t *testing.T, st store.Store, acct string) account.Credential {
	at, rt, id := e.signin.Issue(acct)
	c := account.Credential{AccessToken: at, RefreshToken: rt, IDToken: id, AccountID: acct, Issued: e.clk.Now(),
		Expires: e.clk.Now().Add(e.signin.AccessTTL)}
	blob, err := account.Seal(testKey, "chatgpt", "alice", c)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.PutAccount(context.Background(), store.Account{Channel: "chatgpt", Account: "alice", Provider: "codex",
		Credential: blob, AccessExpires: c.Expires}); err != nil {
		t.Fatal(err)
	}
	return c
}

func newPool(t *testing.T, st store.Store, clk clock.Clock) *account.Pool {
	p := account.New(st, nil, clk, nil)
	p.SetKey(testKey)
	if err := p.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	return p
}

func sqliteStore(t *testing.T) store.Store {
	st, err := store.Open(context.Background(), "sqlite", filepath.Join(t.TempDir(), "ccload.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// burst asks n times at once for alice's credential across pools and
// reports the access tokens handed out.
func (e *env) burst(t *testing.T, n int, pools ...*account.Pool) map[string]bool {
	var wg sync.WaitGroup
	var mu sync.Mutex
	got := map[string]bool{}
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := pools[i%len(pools)].Access(context.Background(), e.ch, "alice")
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			got[c.AccessToken] = true
			mu.Unlock()
		}()
	}
	wg.Wait()
	return got
}

// TestRefreshBeforeExpiry: a token is used as it is until the last fifth
// of its life, then renewed once by 50 concurrent requests.
func TestRefreshBeforeExpiry(t *testing.T) {
	e := newEnv(t, time.Hour)
	st := sqliteStore(t)
	first := e.signIn(t, st, "acct-1")
	p := newPool(t, st, e.clk)
	if got := e.burst(t, 10, p); len(got) != 1 || !got[first.AccessToken] || e.signin.Refreshes("acct-1") != 0 {
		t.Fatalf("fresh token: %d tokens, %d refreshes", len(got), e.signin.Refreshes("acct-1"))
	}
	e.clk.Advance(47 * time.Minute) // 13 minutes left: outside the 12-minute margin
	if e.burst(t, 5, p); e.signin.Refreshes("acct-1") != 0 {
		t.Fatal("refreshed before the margin")
	}
	e.clk.Advance(2 * time.Minute) // 11 minutes left
	got := e.burst(t, 50, p)
	if n := e.signin.Refreshes("acct-1"); n != 1 || len(got) != 1 || got[first.AccessToken] {
		t.Fatalf("50 requests at the margin: %d refreshes, tokens %d (old one among them: %v)", n, len(got), got[first.AccessToken])
	}
	// A restart (a new pool on the same database) uses the rotated token.
	p2 := newPool(t, st, e.clk)
	if got2 := e.burst(t, 3, p2); len(got2) != 1 || !sameKeys(got, got2) || e.signin.Refreshes("acct-1") != 1 {
		t.Fatalf("after restart: %v vs %v", got2, got)
	}
}

func sameKeys(a, b map[string]bool) bool {
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return len(a) == len(b)
}

// TestReusedRefreshTokenInvalidates: a refresh token spent elsewhere makes
// the account invalid with the provider's reason, out of rotation, and it
// is not retried.
func TestReusedRefreshTokenInvalidates(t *testing.T) {
	e := newEnv(t, time.Hour)
	st := sqliteStore(t)
	c := e.signIn(t, st, "acct-1")
	// Someone else (the Codex CLI the auth.json came from) refreshes first.
	if _, err := http_refresh(e.ch.OAuthIssuer, c.RefreshToken); err != nil {
		t.Fatal(err)
	}
	p := newPool(t, st, e.clk)
	e.clk.Advance(55 * time.Minute)
	if _, err := p.Access(context.Background(), e.ch, "alice"); err == nil || !strings.Contains(err.Error(), "refresh_token_reused") {
		t.Fatalf("access after a reused refresh token: %v", err)
	}
	if ok, why := p.Usable("chatgpt", "alice", e.clk.Now()); ok || !strings.Contains(why, "invalid: refresh_token_reused") {
		t.Fatalf("usable = %v %q", ok, why)
	}
	before := e.signin.Reused()
	_, _ = p.Access(context.Background(), e.ch, "alice")
	if e.signin.Reused() != before {
		t.Fatal("an invalid account was refreshed again")
	}
	rows, _ := st.ListAccounts(context.Background())
	if rows[0].State != store.AccountInvalid {
		t.Fatalf("stored state %q", rows[0].State)
	}
}

func http_refresh(issuer, rt string) (string, error) {
	resp, err := httpPostForm(issuer+"/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {"other"}})
	return resp, err
}

// TestOneRefreshPerRotationAcrossInstances: two instances (two pools, each
// with its own connection pool) on one PostgreSQL or MariaDB database,
// 50 concurrent requests at each expiry: exactly one refresh per rotation
// and never refresh_token_reused.
func TestOneRefreshPerRotationAcrossInstances(t *testing.T) {
	for _, db := range []struct{ driver, env string }{{"postgres", "CCLOAD_TEST_POSTGRES"}, {"mysql", "CCLOAD_TEST_MYSQL"}, {"sqlite", ""}} {
		t.Run(db.driver, func(t *testing.T) {
			a, b := twoStores(t, db.driver, db.env)
			e := newEnv(t, time.Hour)
			e.signIn(t, a, "acct-1")
			pa, pb := newPool(t, a, e.clk), newPool(t, b, e.clk)
			for rot := 1; rot <= 3; rot++ {
				e.clk.Advance(50 * time.Minute)
				got := e.burst(t, 50, pa, pb)
				if n := e.signin.Refreshes("acct-1"); n != rot || len(got) != 1 || e.signin.Reused() != 0 {
					t.Fatalf("rotation %d: %d refreshes, %d distinct tokens, %d reused", rot, n, len(got), e.signin.Reused())
				}
			}
		})
	}
}

// twoStores opens two handles on one fresh database of driver.
func twoStores(t *testing.T, driver, envName string) (store.Store, store.Store) {
	var dsn string
	switch driver {
	case "sqlite":
		dsn = filepath.Join(t.TempDir(), "ccload.db")
	default:
		base := os.Getenv(envName)
		if base == "" {
			t.Skip(envName + " is not set: this dialect did NOT run")
		}
		name := "ccload_acct_" + randHex()
		if driver == "postgres" {
			admin(t, "pgx", base, "CREATE SCHEMA "+name, "DROP SCHEMA IF EXISTS "+name+" CASCADE")
			u, _ := url.Parse(base)
			q := u.Query()
			q.Set("search_path", name)
			u.RawQuery = q.Encode()
			dsn = u.String()
		} else {
			admin(t, "mysql", base, "CREATE DATABASE "+name, "DROP DATABASE IF EXISTS "+name)
			cfg, _ := mysql.ParseDSN(base)
			cfg.DBName = name
			dsn = cfg.FormatDSN()
		}
	}
	open := func() store.Store {
		st, err := store.Open(context.Background(), driver, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	return open(), open()
}

func admin(t *testing.T, driver, dsn, create, drop string) {
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(create); err != nil {
		db.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Exec(drop); db.Close() })
}

func randHex() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// TestXAIRefresh: an xAI account refreshes through the issuer's discovered
// token endpoint (RFC 8414), form-encoded.
func TestXAIRefresh(t *testing.T) {
	e := newEnv(t, time.Hour)
	e.ch.OAuth, e.ch.OAuthClientID = config.OAuthXAI, "xai-client"
	st := sqliteStore(t)
	first := e.signIn(t, st, "acct-x")
	p := newPool(t, st, e.clk)
	e.clk.Advance(50 * time.Minute)
	c, err := p.Access(context.Background(), e.ch, "alice")
	if err != nil || c.AccessToken == first.AccessToken || e.signin.Refreshes("acct-x") != 1 || c.AccountID != "acct-x" {
		t.Fatalf("xai refresh: %v, refreshes %d, account %q", err, e.signin.Refreshes("acct-x"), c.AccountID)
	}
}
