package securitytest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Finding: an existing SQLite file kept a loose mode; only a new one was
// made 0600. serve tightens it on open.
func TestExistingDatabaseMadePrivate(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "loose.db")
	if err := os.WriteFile(db, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(db, 0o644) // whatever the umask
	yaml := strings.ReplaceAll(config("", "http://127.0.0.1:9", ""), "{{DB}}", db)
	start(t, yaml)
	st, err := os.Stat(db)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		t.Errorf("database file mode %v after serve opened it, want owner only", st.Mode().Perm())
	}
}

// Finding: the login limiter counted exact addresses, and an IPv6 client
// picks any of the 2^64 addresses of its /64. It counts the /64.
func TestLoginLimiterCountsIPv6Prefixes(t *testing.T) {
	_, up := startMock(t)
	s := start(t, config(`  trusted_proxies: ["127.0.0.0/8"]`, up, ""))
	for i := range 6 {
		do(t, "POST", s.URL+"/admin/login", `{"password":"wrong"}`, map[string]string{"X-Forwarded-For": fmt.Sprintf("2001:db8:1:2::%x", i+1)})
	}
	if r, _ := do(t, "POST", s.URL+"/admin/login", `{"password":"wrong"}`, map[string]string{"X-Forwarded-For": "2001:db8:1:2:ffff::7"}); r.StatusCode != 429 {
		t.Errorf("a guesser rotating through one /64 is not limited: %d", r.StatusCode)
	}
	// Another /64 is another client.
	login(t, s, map[string]string{"X-Forwarded-For": "2001:db8:1:3::1"})
}
