package cmd

import (
	"database/sql"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// TestTwoServersOneDatabase: two `ccload serve` on one PostgreSQL or
// MariaDB database, both busy while the accounts' short-lived tokens
// rotate: every request answers 200, no refresh token is ever spent twice
// (refresh_token_reused), and there is about one refresh per rotation, not
// one per instance.
func TestTwoServersOneDatabase(t *testing.T) {
	for _, tc := range []struct{ driver, env string }{{"postgres", "CCLOAD_TEST_POSTGRES"}, {"mysql", "CCLOAD_TEST_MYSQL"}} {
		t.Run(tc.driver, func(t *testing.T) {
			base := os.Getenv(tc.env)
			if base == "" {
				t.Skip(tc.env + " is not set: this dialect did NOT run")
			}
			dsn := tempDatabase(t, tc.driver, base)
			const ttl = 2 * time.Second
			e := newAcctEnvOn(t, ttl, `{driver: `+tc.driver+`, dsn: "`+dsn+`"}`)
			e.importAuth(t, "alice", "acct-a")
			e.importAuth(t, "bob", "acct-b")
			b1, stop1 := e.serve(t)
			defer stop1()
			b2, stop2 := e.serve(t)
			defer stop2()
			start := time.Now()
			var wg sync.WaitGroup
			for i := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					base := []string{b1, b2}[i%2]
					for time.Since(start) < 5*time.Second {
						if code, body := ask(t, base, "responses"); code != 200 {
							t.Errorf("%d %s", code, body)
							return
						}
						time.Sleep(50 * time.Millisecond) // pace: the point is the rotations, not the load
					}
				}()
			}
			wg.Wait()
			rotations := int(time.Since(start)/(ttl*4/5)) + 1
			for _, a := range []string{"acct-a", "acct-b"} {
				if n := e.signin.Refreshes(a); n < 1 || n > rotations {
					t.Errorf("%s: %d refreshes in %s (at most %d rotations)", a, n, time.Since(start).Round(time.Millisecond), rotations)
				}
			}
			if n := e.signin.Reused(); n != 0 {
				t.Fatalf("%d refresh tokens spent twice", n)
			}
			for k, s := range e.accounts(t) {
				if k != "grok/carol" && s.State != "ok" {
					t.Errorf("%s: %+v", k, s)
				}
			}
		})
	}
}

// tempDatabase makes a schema (PostgreSQL) or database (MySQL) for t and
// returns its DSN.
func tempDatabase(t *testing.T, driver, base string) string {
	name := "ccload_cmd_" + time.Now().Format("150405") + "_" + randomSuffix()
	sqlDriver := map[string]string{"postgres": "pgx", "mysql": "mysql"}[driver]
	db, err := sql.Open(sqlDriver, base)
	if err != nil {
		t.Fatal(err)
	}
	create, drop := "CREATE SCHEMA "+name, "DROP SCHEMA IF EXISTS "+name+" CASCADE"
	if driver == "mysql" {
		create, drop = "CREATE DATABASE "+name, "DROP DATABASE IF EXISTS "+name
	}
	if _, err := db.Exec(create); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Exec(drop); db.Close() })
	if driver == "mysql" {
		cfg, _ := mysql.ParseDSN(base)
		cfg.DBName = name
		return cfg.FormatDSN()
	}
	u, _ := url.Parse(base)
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}

func randomSuffix() string {
	return time.Now().Format("050000000")[2:]
}
