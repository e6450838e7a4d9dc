package admin_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"time"
)

// login opens a session on e and returns the cookie ("name=value") and the
// token in it.
func (e *env) login(t *testing.T) (cookie, token string) {
	t.Helper()
	resp, body := e.call(t, "POST", "/admin/login", nil, `{"password":"`+adminPass+`"}`)
	if resp.StatusCode != 200 {
		t.Fatalf("login: %d %s", resp.StatusCode, body)
	}
	cookie = strings.SplitN(resp.Header.Get("Set-Cookie"), ";", 2)[0]
	return cookie, strings.TrimPrefix(cookie, "ccload_session=")
}

// statusWith is the status of GET /admin/status with cookie.
func (e *env) statusWith(t *testing.T, cookie string) int {
	t.Helper()
	resp, _ := e.call(t, "GET", "/admin/status", map[string]string{"Cookie": cookie}, "")
	return resp.StatusCode
}

// TestSessionStoredHashed: the database holds sha256(token) and a tag, never
// the token or anything the password can be read from.
func TestSessionStoredHashed(t *testing.T) {
	e := start(t)
	_, token := e.login(t)
	sum := sha256.Sum256([]byte(token))
	row, ok, err := e.Store.Session(context.Background(), hex.EncodeToString(sum[:]))
	if err != nil || !ok {
		t.Fatalf("session row: ok %v err %v", ok, err)
	}
	pwSum := sha256.Sum256([]byte(adminPass))
	for _, leak := range []string{token, adminPass, hex.EncodeToString(pwSum[:])} {
		if strings.Contains(row.ID+row.PasswordTag, leak) {
			t.Errorf("session row %+v holds a secret", row)
		}
	}
	if !row.Expires.Equal(epoch.Add(12*time.Hour)) || !row.Created.Equal(epoch) {
		t.Errorf("session row times %v / %v, want %v and 12 h later", row.Created, row.Expires, epoch)
	}
}

// TestSessionSharedByInstances: two admin servers on one database (two
// instances): a login on A works on B; a logout on A ends the session on B
// once B's cached answer is older than a second.
func TestSessionSharedByInstances(t *testing.T) {
	a := start(t)
	b := startOn(t, a.Src.Current().Storage.DSN.Reveal())
	cookie, _ := a.login(t)
	if st := b.statusWith(t, cookie); st != 200 {
		t.Fatalf("A's session on B: %d, want 200", st)
	}
	if resp, _ := a.call(t, "POST", "/admin/logout", map[string]string{"Cookie": cookie}, ""); resp.StatusCode != 200 {
		t.Fatalf("logout on A: %d", resp.StatusCode)
	}
	if st := a.statusWith(t, cookie); st != 401 {
		t.Errorf("on A right after its logout: %d, want 401", st)
	}
	// B answers from its cache for up to a second, then reads the row again.
	b.Clock.Advance(time.Second)
	if st := b.statusWith(t, cookie); st != 401 {
		t.Errorf("on B a second after the logout on A: %d, want 401", st)
	}
}

// TestSessionEndsEverywhereOnPasswordChange: the session is bound to the
// password it was opened with, on every instance.
func TestSessionEndsEverywhereOnPasswordChange(t *testing.T) {
	a := start(t)
	b := startOn(t, a.Src.Current().Storage.DSN.Reveal())
	cookie, _ := a.login(t)
	if st := b.statusWith(t, cookie); st != 200 {
		t.Fatalf("A's session on B: %d", st)
	}
	file := b.Src.Status().File
	old, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(strings.Replace(string(old), adminPass, "another-admin-pass-0099", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := b.Src.Reload(); err != nil {
		t.Fatal(err)
	}
	if st := b.statusWith(t, cookie); st != 401 {
		t.Errorf("on B after its password changed: %d, want 401", st)
	}
	if st := a.statusWith(t, cookie); st != 200 {
		t.Errorf("on A, still on the old password: %d, want 200", st)
	}
}

// TestSessionsPruned: a login deletes the rows that expired.
func TestSessionsPruned(t *testing.T) {
	e := start(t)
	_, token := e.login(t)
	e.Clock.Advance(13 * time.Hour)
	e.login(t)
	sum := sha256.Sum256([]byte(token))
	if _, ok, err := e.Store.Session(context.Background(), hex.EncodeToString(sum[:])); ok || err != nil {
		t.Errorf("expired session still stored after a later login: ok %v err %v", ok, err)
	}
}

// TestSessionsDuringOutage: with the database gone, a session already seen
// keeps working, a logout still ends it here, and a new login answers 503.
func TestSessionsDuringOutage(t *testing.T) {
	e := start(t)
	cookie, _ := e.login(t)
	other, _ := e.login(t)
	if err := e.Store.Close(); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(2 * time.Second) // past the cache: every check tries the database
	if st := e.statusWith(t, cookie); st != 200 {
		t.Errorf("known session during the outage: %d, want 200", st)
	}
	if resp, _ := e.call(t, "POST", "/admin/logout", map[string]string{"Cookie": other}, ""); resp.StatusCode != 200 {
		t.Errorf("logout during the outage: %d, want 200", resp.StatusCode)
	}
	if st := e.statusWith(t, other); st != 401 {
		t.Errorf("logged-out session during the outage: %d, want 401", st)
	}
	resp, body := e.call(t, "POST", "/admin/login", nil, `{"password":"`+adminPass+`"}`)
	if resp.StatusCode != 503 || !strings.Contains(body, "Bearer") {
		t.Errorf("login during the outage: %d %s, want 503 naming the Bearer route", resp.StatusCode, body)
	}
	e.Clock.Advance(12 * time.Hour)
	if st := e.statusWith(t, cookie); st != 401 {
		t.Errorf("expired session during the outage: %d, want 401", st)
	}
}
