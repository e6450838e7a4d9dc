package scaleout

import (
	"encoding/json"
	"github.com/ccload/ccload/ccloadtest/wait"
	"io"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Bounds the cluster tests assert, with their slack for a loaded machine:
// a logout is seen by the other instance within sessionSeen (the design
// says 1 s: one cached answer), and a killed instance leaves the list
// within instanceGone (the design says 30 s after its last heartbeat).
// Both are measured, not slept.
const (
	sessionSeen  = 2 * time.Second
	instanceGone = 33 * time.Second
)

const adminPass = "scaleout-admin"

// TestClusterPostgres: two instances on one PostgreSQL schema share admin
// sessions and list each other; a killed one drops out.
func TestClusterPostgres(t *testing.T) {
	t.Parallel()
	cluster(t, writeConfig(t, "postgres", freshPostgres(t)))
}

// TestClusterMySQL is the same on MySQL or MariaDB.
func TestClusterMySQL(t *testing.T) {
	t.Parallel()
	cluster(t, writeConfig(t, "mysql", freshMySQL(t)))
}

func cluster(t *testing.T, cfg string) {
	a := startServe(t, cfg)
	b, bProc := startServeCmd(t, cfg)
	if t.Failed() {
		t.FailNow()
	}

	// A session opened on A works on B, and a logout on A ends it on B.
	cookie := login(t, a)
	if st := get(t, b, "/admin/status", cookie, nil); st != http.StatusOK {
		t.Fatalf("A's session on B: %d, want 200", st)
	}
	if st := post(t, a, "/admin/logout", cookie); st != http.StatusOK {
		t.Fatalf("logout on A: %d", st)
	}
	loggedOut := time.Now()
	wait.Eventually(t, sessionSeen, "B refusing the session logged out on A", func() bool {
		return get(t, b, "/admin/status", cookie, nil) == http.StatusUnauthorized
	})
	t.Logf("logout on A seen by B after %v", time.Since(loggedOut).Round(time.Millisecond))

	// Both instances are listed, by either.
	var bStatus status
	get(t, b, "/admin/status", "", &bStatus)
	var aStatus status
	get(t, a, "/admin/status", "", &aStatus)
	if bStatus.Instance == "" || aStatus.Instance == bStatus.Instance {
		t.Fatalf("instance ids: A %q, B %q", aStatus.Instance, bStatus.Instance)
	}
	for _, s := range []status{aStatus, bStatus} {
		if got := s.ids(); !slices.Contains(got, aStatus.Instance) || !slices.Contains(got, bStatus.Instance) || len(got) != 2 {
			t.Fatalf("%s lists %v, want A %s and B %s", s.Instance, got, aStatus.Instance, bStatus.Instance)
		}
	}
	for _, in := range aStatus.Instances {
		if in.ID == bStatus.Instance && in.Address != b {
			t.Errorf("B's address in A's list: %q, want %q", in.Address, b)
		}
	}

	// B dies without a word; A stops listing it within 30 s of its last
	// heartbeat.
	if err := bProc.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	wait.Eventually(t, instanceGone, "A dropping the killed B from its list", func() bool {
		var s status
		get(t, a, "/admin/status", "", &s)
		if !slices.Contains(s.ids(), aStatus.Instance) {
			t.Fatalf("A no longer lists itself: %v", s.ids())
		}
		return !slices.Contains(s.ids(), bStatus.Instance)
	})
	t.Logf("killed B dropped from A's list after %v", time.Since(killed).Round(100*time.Millisecond))
}

// status is the part of GET /admin/status these tests read.
type status struct {
	Instance  string `json:"instance"`
	Instances []struct {
		ID      string `json:"id"`
		Address string `json:"address"`
	} `json:"instances"`
}

func (s status) ids() []string {
	var out []string
	for _, in := range s.Instances {
		out = append(out, in.ID)
	}
	return out
}

// login opens an admin session on addr and returns its cookie.
func login(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Post("http://"+addr+"/admin/login", "application/json",
		strings.NewReader(`{"password":"`+adminPass+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	cookie, _, _ := strings.Cut(resp.Header.Get("Set-Cookie"), ";")
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(cookie, "ccload_session=") {
		t.Fatalf("login: %d %q %s", resp.StatusCode, cookie, body)
	}
	return cookie
}

// get sends GET path with cookie, or the password as a Bearer token when
// cookie is "", decodes a 200 answer into out when it is not nil, and
// returns the status.
func get(t *testing.T, addr, path, cookie string, out any) int {
	t.Helper()
	return do(t, "GET", addr, path, cookie, out)
}

func post(t *testing.T, addr, path, cookie string) int {
	t.Helper()
	return do(t, "POST", addr, path, cookie, nil)
}

func do(t *testing.T, method, addr, path, cookie string, out any) int {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+addr+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cookie != "" {
		req.Header.Set("Cookie", cookie)
	} else {
		req.Header.Set("Authorization", "Bearer "+adminPass)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(body, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, body)
		}
	}
	return resp.StatusCode
}
