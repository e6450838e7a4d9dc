package config

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultDebounce is how long Watch waits after the last file event before
// reloading. Editors and `git checkout` write a file in several steps; one
// quiet interval turns the burst into one reload.
const DefaultDebounce = 150 * time.Millisecond

// Source owns the current Snapshot of one config file and replaces it,
// whole and atomically, when the file changes.
//
// Readers call Current once per unit of work (one request) and keep that
// Snapshot to the end, so in-flight work finishes on the config it started
// with. A reload that fails keeps the old Snapshot serving and records the
// error in Status.
//
// Source does not handle signals: the caller (cmd/serve) turns SIGHUP into a
// call to Reload, and the admin API's "reload" calls the same method, so
// there is one reload path. Watch covers changes to the file itself.
type Source struct {
	// Debounce is the quiet interval Watch waits for before reloading
	// (DefaultDebounce after Open). Set it before calling Watch.
	Debounce time.Duration
	// Logger gets one record per reload that changed something or failed
	// (slog.Default() after Open). Set it before calling Watch or Reload.
	Logger *slog.Logger

	path string
	env  Env
	cur  atomic.Pointer[Snapshot]

	reloadMu sync.Mutex // one Reload at a time, so subscribers see swaps in order

	mu     sync.Mutex // guards status and subs
	status Status
	subs   []func(old, new *Snapshot)

	watchOnce sync.Once
	watching  chan struct{} // closed once Watch has its watches in place
}

// Status describes the last reload attempt, for /health, the dashboard and
// `ccload top`.
type Status struct {
	File        string    `json:"file"`
	SHA256      string    `json:"sha256"`       // of the file bytes of the serving snapshot
	LoadedAt    time.Time `json:"loaded_at"`    // when the serving snapshot was built
	LastAttempt time.Time `json:"last_attempt"` // when the file was last read
	// Error is the last attempt's error ("file:line:col: msg" lines), or ""
	// when it succeeded or found nothing changed. While it is set, the
	// previous snapshot is still the one serving.
	Error    string `json:"error"`
	Reloads  int    `json:"reloads"`  // snapshots swapped in since Open
	Failures int    `json:"failures"` // failed attempts since Open
}

// Open loads the file at path, expanding from the process environment. An
// invalid file is an error: there is no old snapshot to fall back to.
func Open(path string) (*Source, error) { return open(path, OSEnv()) }

func open(path string, env Env) (*Source, error) {
	s := &Source{
		Debounce: DefaultDebounce,
		Logger:   slog.Default(),
		path:     path,
		env:      env,
		watching: make(chan struct{}),
	}
	snap, err := s.build()
	if err != nil {
		return nil, err
	}
	s.cur.Store(snap)
	s.status = Status{File: path, SHA256: snap.SHA256, LoadedAt: snap.LoadedAt, LastAttempt: snap.LoadedAt}
	return s, nil
}

// Current returns the snapshot in force. It never returns nil.
func (s *Source) Current() *Snapshot { return s.cur.Load() }

// Status returns a copy of the reload status.
func (s *Source) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status
}

// OnSwap registers fn to run after each successful swap, with the snapshot
// replaced and its replacement. Subscribers run one after another on the
// goroutine that called Reload, in registration order; they must return
// quickly and must not call Reload.
func (s *Source) OnSwap(fn func(old, new *Snapshot)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.subs = append(s.subs, fn)
}

// Reload reads the file again. When its bytes (and the files it reads with
// ${file:...}) are unchanged it does nothing but clear Status.Error.
// Otherwise it builds a new snapshot and swaps it in; when the build fails
// it keeps the current snapshot, records the error in Status and returns
// it. It is safe to call from any goroutine (SIGHUP handler, admin API,
// Watch).
func (s *Source) Reload() error {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	start := time.Now()
	old := s.cur.Load()

	data, err := s.env.ReadFile(s.path)
	if err == nil && s.unchanged(old, data) {
		s.update(func(st *Status) { st.LastAttempt, st.Error = start, "" })
		s.Logger.Debug("config unchanged, not reloaded", "file", s.path)
		return nil
	}
	var snap *Snapshot
	if err != nil {
		err = fmt.Errorf("config: %w", err)
	} else {
		snap, err = Parse(s.path, data, s.env)
	}
	if err != nil {
		s.update(func(st *Status) { st.LastAttempt, st.Error = start, err.Error(); st.Failures++ })
		s.Logger.Error("config reload failed, keeping the previous config", "file", s.path, "error", err.Error())
		return err
	}

	s.cur.Store(snap)
	var subs []func(old, new *Snapshot)
	s.update(func(st *Status) {
		st.SHA256, st.LoadedAt, st.LastAttempt, st.Error = snap.SHA256, snap.LoadedAt, start, ""
		st.Reloads++
		subs = append(subs, s.subs...)
	})
	for _, fn := range subs {
		fn(old, snap)
	}
	s.Logger.Info("config reloaded", "file", s.path, "sha256", snap.SHA256[:12],
		"channels", len(snap.Channels), "tokens", len(snap.Tokens), "took", time.Since(start).Round(time.Microsecond))
	return nil
}

func (s *Source) build() (*Snapshot, error) {
	data, err := s.env.ReadFile(s.path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return Parse(s.path, data, s.env)
}

// unchanged reports whether data and every file old read through
// ${file:...} are what old was built from.
func (s *Source) unchanged(old *Snapshot, data []byte) bool {
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != old.SHA256 {
		return false
	}
	for p, want := range old.deps {
		have := ""
		if b, err := s.env.ReadFile(p); err == nil {
			sum := sha256.Sum256(b)
			have = hex.EncodeToString(sum[:])
		}
		if have != want {
			return false
		}
	}
	return true
}

func (s *Source) update(fn func(*Status)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fn(&s.status)
}
