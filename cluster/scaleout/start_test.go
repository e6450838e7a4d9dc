package scaleout

import (
	"bufio"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib"
)

// bin is the ccload binary built once by TestMain.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ccload-scaleout-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "ccload")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/ccload/ccload").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// instances is how many processes start at once on an empty database.
const instances = 3

// TestSimultaneousStartPostgres starts several instances at once on an
// empty PostgreSQL schema: every one comes up and each migration is
// recorded once.
func TestSimultaneousStartPostgres(t *testing.T) {
	t.Parallel()
	dsn := freshPostgres(t)
	simultaneousStart(t, "postgres", dsn, "pgx", dsn)
}

// TestSimultaneousStartMySQL is the same on MySQL or MariaDB.
func TestSimultaneousStartMySQL(t *testing.T) {
	t.Parallel()
	dsn := freshMySQL(t)
	simultaneousStart(t, "mysql", dsn, "mysql", dsn)
}

func simultaneousStart(t *testing.T, driver, dsn, sqlDriver, sqlDSN string) {
	cfg := writeConfig(t, driver, dsn)
	addrs := make([]string, instances)
	var wg sync.WaitGroup
	for i := range instances {
		wg.Go(func() { addrs[i] = startServe(t, cfg) })
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	for i, a := range addrs {
		resp, err := http.Get("http://" + a + "/health")
		if err != nil {
			t.Errorf("instance %d: /health: %v", i, err)
			continue
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("instance %d: /health = %d", i, resp.StatusCode)
		}
	}

	db, err := sql.Open(sqlDriver, sqlDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var rows, distinct, maxV int
	if err := db.QueryRow("SELECT COUNT(*), COUNT(DISTINCT version), MAX(version) FROM schema_migrations").
		Scan(&rows, &distinct, &maxV); err != nil {
		t.Fatal(err)
	}
	want, last := migrationCount(t, driver)
	if rows != want || distinct != want || maxV != last {
		t.Errorf("schema_migrations: %d rows, %d versions, max %d; want each migration once (%d, up to %d)", rows, distinct, maxV, want, last)
	}
}

// migrationCount is the number of the dialect's migration files and the
// highest version among them. Numbers are allocated ahead of time, so a
// version may be missing while the work that owns it has not landed.
func migrationCount(t *testing.T, driver string) (n, last int) {
	files, err := fs.Glob(os.DirFS("../../store/migrations"), "*."+driver+".sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("no %s migrations: %v", driver, err)
	}
	for _, f := range files {
		num, _, _ := strings.Cut(f, "_")
		v, err := strconv.Atoi(num)
		if err != nil {
			t.Fatalf("migration %s: %v", f, err)
		}
		last = max(last, v)
	}
	return len(files), last
}

func writeConfig(t *testing.T, driver, dsn string) string {
	cfg := filepath.Join(t.TempDir(), "ccload.yaml")
	body := fmt.Sprintf(`version: 1
server: {listen: "127.0.0.1:0", admin_password: scaleout-admin}
storage: {driver: %s, dsn: %q, shared: true}
channels:
  - name: up
    urls: [http://127.0.0.1:9]
    keys: [sk-scaleout-key-0001]
    models: [m]
`, driver, dsn)
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg
}

var servingRE = regexp.MustCompile(`msg="ccload serving" addr=(\S+)`)

// startServe runs `ccload serve` until the test ends and returns its
// address once it logs that it serves. It reports failures with t.Errorf,
// so it may run on any goroutine.
func startServe(t *testing.T, cfg string) string {
	addr, _ := startServeCmd(t, cfg)
	return addr
}

// startServeCmd is startServe that also returns the process, for tests
// that stop it themselves.
func startServeCmd(t *testing.T, cfg string) (string, *exec.Cmd) {
	cmd := exec.Command(bin, "serve", "-c", cfg)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Error(err)
		return "", nil
	}
	if err := cmd.Start(); err != nil {
		t.Error(err)
		return "", nil
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	addrc := make(chan string, 1)
	var mu sync.Mutex
	var lines []string
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			lines = append(lines, sc.Text())
			mu.Unlock()
			if m := servingRE.FindStringSubmatch(sc.Text()); m != nil {
				addrc <- m[1]
			}
		}
		close(addrc)
	}()
	select {
	case a, ok := <-addrc:
		if ok {
			return a, cmd
		}
	case <-time.After(time.Minute):
	}
	mu.Lock()
	defer mu.Unlock()
	t.Errorf("ccload serve did not start:\n%s", strings.Join(lines, "\n"))
	return "", cmd
}

// Environment of the integration runs, as in the store tests; the Makefile
// sets both.
const (
	envPostgres   = "CCLOAD_TEST_POSTGRES"
	envMySQL      = "CCLOAD_TEST_MYSQL"
	envRequireDBs = "CCLOAD_REQUIRE_DBS"
)

func integrationDSN(t *testing.T, env, example string) string {
	t.Helper()
	if dsn := os.Getenv(env); dsn != "" {
		return dsn
	}
	msg := "*** " + env + " is not set: the scale-out tests on this database did NOT run. " +
		"To run them: " + env + "='" + example + "' go test ./scaleout/ ***"
	if os.Getenv(envRequireDBs) == "1" {
		t.Fatal(msg + " (" + envRequireDBs + "=1 makes this a failure)")
	}
	t.Skip(msg)
	return ""
}

// freshPostgres creates a schema of its own in the database
// CCLOAD_TEST_POSTGRES names, drops it when t ends, and returns a DSN
// whose search_path selects it.
func freshPostgres(t *testing.T) string {
	base := integrationDSN(t, envPostgres, "postgres://postgres@127.0.0.1:5432/test?sslmode=disable")
	name := uniqueName()
	adminExec(t, "pgx", base, "CREATE SCHEMA "+name, "DROP SCHEMA IF EXISTS "+name+" CASCADE")
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}

// freshMySQL creates a database of its own on the server
// CCLOAD_TEST_MYSQL names and drops it when t ends.
func freshMySQL(t *testing.T) string {
	base := integrationDSN(t, envMySQL, "root@tcp(127.0.0.1:3306)/test")
	name := uniqueName()
	adminExec(t, "mysql", base, "CREATE DATABASE "+name, "DROP DATABASE IF EXISTS "+name)
	cfg, err := mysql.ParseDSN(base)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DBName = name
	return cfg.FormatDSN()
}

func uniqueName() string {
	b := make([]byte, 8)
	rand.Read(b)
	return "ccload_so_" + hex.EncodeToString(b)
}

// adminExec runs create on the server at dsn and registers drop with
// t.Cleanup (which runs after the instances' cleanups have stopped them).
func adminExec(t *testing.T, driver, dsn, create, drop string) {
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := db.ExecContext(ctx, create); err != nil {
		db.Close()
		t.Fatalf("%s: %v", create, err)
	}
	t.Cleanup(func() {
		defer db.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := db.ExecContext(ctx, drop); err != nil {
			t.Errorf("cleanup %q: %v", drop, err)
		}
	})
}
