package gateway

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccload/ccload/cmd"
)

// Served is a running `ccload serve` (cmd.Serve) in the test process: the
// whole command, for tests of what only it does (startup checks, its log
// output, the dashboard password, the files it writes).
type Served struct {
	URL    string // http://Addr
	Addr   string
	Dir    string // the temporary directory holding File and DB
	File   string // the config file
	DB     string // the SQLite file {{DB}} stood for
	Stderr *LogBuffer
	// Stop ends serve and waits for it; the test's cleanup calls it too.
	Stop func()
}

// Serve writes yaml ({{DB}} replaced by a SQLite file in a new temporary
// directory) and runs serve on it until the test ends.
func Serve(t testing.TB, yaml string) *Served {
	t.Helper()
	dir := t.TempDir()
	db := filepath.Join(dir, "data", "ccload.db")
	yaml = strings.ReplaceAll(yaml, "{{DB}}", db)
	file := filepath.Join(dir, "ccload.yaml")
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	errb := &LogBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan string, 1)
	done := make(chan error, 1)
	streams := cmd.IOStreams{In: strings.NewReader(""), Out: io.Discard, Err: errb}
	go func() {
		done <- cmd.Serve(ctx, &cmd.ServeOptions{IO: streams, Config: file, Grace: 2 * time.Second, NoWatch: true,
			Ready: func(a string) { addr <- a }})
	}()
	s := &Served{Dir: dir, File: file, DB: db, Stderr: errb}
	select {
	case a := <-addr:
		s.Addr, s.URL = a, "http://"+a
	case err := <-done:
		cancel()
		t.Fatalf("serve exited: %v\n%s", err, errb)
	}
	var once sync.Once
	s.Stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(s.Stop)
	return s
}

// LogBuffer is a bytes.Buffer safe for the server's log writer and the
// test reading it.
type LogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *LogBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *LogBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
