package config

import (
	"bytes"
	"context"
	"errors"
	"github.com/ccload/ccload/ccloadtest/wait"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// cfg is a valid file whose one channel serves model.
func cfg(model string) string {
	return `version: 1
channels:
  - name: main
    urls: [https://api.anthropic.com]
    keys: [sk-test-key-000001]
    models: [` + model + `]
`
}

// badCfg has one problem, on line 7, column 15.
var badCfg = cfg("m1") + "    priority: high\n"

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func serves(s *Source, model string) func() bool {
	return func() bool { return len(s.Current().Routes(model)) > 0 }
}

// syncBuffer is a log sink the watcher goroutine and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// openAt opens path with a short debounce and a captured log.
func openAt(t *testing.T, path string) (*Source, *syncBuffer) {
	t.Helper()
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	logs := new(syncBuffer)
	s.Logger = slog.New(slog.NewTextHandler(logs, nil))
	s.Debounce = 20 * time.Millisecond
	return s, logs
}

// watch runs s.Watch until the test ends and waits until it is watching.
func watch(t *testing.T, s *Source) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Watch(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Watch returned %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Watch did not return after cancel")
		}
	})
	select {
	case <-s.watching:
	case err := <-done:
		t.Fatalf("Watch ended early: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("Watch did not start")
	}
}

func TestSourceReloadOnWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ccload.yaml")
	writeFile(t, path, cfg("m1"))
	s, _ := openAt(t, path)
	var swaps []string
	var mu sync.Mutex
	s.OnSwap(func(old, new *Snapshot) {
		mu.Lock()
		defer mu.Unlock()
		swaps = append(swaps, old.Models()[0]+"->"+new.Models()[0])
	})
	watch(t, s)

	first := s.Current()
	writeFile(t, path, cfg("m2"))
	wait.Eventually(t, 10*time.Second, "reload after write", serves(s, "m2"))
	if len(first.Routes("m1")) != 1 {
		t.Error("the old snapshot must stay as it was for requests holding it")
	}
	st := s.Status()
	if st.Reloads != 1 || st.Failures != 0 || st.Error != "" || st.SHA256 != s.Current().SHA256 || st.File != path {
		t.Errorf("status = %+v", st)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(swaps, ",") != "m1->m2" {
		t.Errorf("OnSwap saw %v", swaps)
	}
}

// TestSourceReloadOnRenameOver: editors and `git checkout` write a new file
// and rename it over the old one.
func TestSourceReloadOnRenameOver(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ccload.yaml")
	writeFile(t, path, cfg("m1"))
	s, _ := openAt(t, path)
	watch(t, s)

	for i, model := range []string{"m2", "m3"} { // twice: the watch must survive the first rename
		tmp := filepath.Join(dir, ".ccload.yaml.swp")
		writeFile(t, tmp, cfg(model))
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
		wait.Eventually(t, 10*time.Second, "reload after rename "+model, serves(s, model))
		if got := s.Status().Reloads; got != i+1 {
			t.Errorf("reloads = %d, want %d", got, i+1)
		}
	}

	// Remove then create, as some tools do.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, cfg("m4"))
	wait.Eventually(t, 10*time.Second, "reload after re-create", serves(s, "m4"))
}

// TestSourceReloadOnSymlinkSwap lays the file out as a Kubernetes ConfigMap
// volume does (ccload.yaml -> ..data/ccload.yaml, ..data -> ..v1) and
// updates it the same way: a new directory, then an atomic rename of the
// ..data link. ccload.yaml itself never changes.
func TestSourceReloadOnSymlinkSwap(t *testing.T) {
	dir := t.TempDir()
	for _, v := range []string{"..v1", "..v2", "..v3"} {
		if err := os.Mkdir(filepath.Join(dir, v), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(dir, "..v1", "ccload.yaml"), cfg("m1"))
	must(t, os.Symlink("..v1", filepath.Join(dir, "..data")))
	must(t, os.Symlink(filepath.Join("..data", "ccload.yaml"), filepath.Join(dir, "ccload.yaml")))
	path := filepath.Join(dir, "ccload.yaml")
	s, _ := openAt(t, path)
	watch(t, s)

	swap := func(to, model string) {
		writeFile(t, filepath.Join(dir, to, "ccload.yaml"), cfg(model))
		tmp := filepath.Join(dir, "..data_tmp")
		must(t, os.Symlink(to, tmp))
		must(t, os.Rename(tmp, filepath.Join(dir, "..data")))
	}
	swap("..v2", "m2")
	must(t, os.RemoveAll(filepath.Join(dir, "..v1")))
	wait.Eventually(t, 10*time.Second, "reload after the first swap", serves(s, "m2"))
	swap("..v3", "m3") // the watch follows the link to its new target
	wait.Eventually(t, 10*time.Second, "reload after the second swap", serves(s, "m3"))

	// Writing the target in place counts too.
	writeFile(t, filepath.Join(dir, "..v3", "ccload.yaml"), cfg("m4"))
	wait.Eventually(t, 10*time.Second, "reload after writing the link target", serves(s, "m4"))
}

func TestSourceInvalidReloadKeepsOld(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ccload.yaml")
	writeFile(t, path, cfg("m1"))
	s, logs := openAt(t, path)
	watch(t, s)
	good := s.Current()

	writeFile(t, path, badCfg)
	wait.Eventually(t, 10*time.Second, "a failed reload", func() bool { return s.Status().Failures > 0 })
	if s.Current() != good {
		t.Error("a failed reload must keep the old snapshot")
	}
	st := s.Status()
	want := regexp.QuoteMeta(path) + `:7:15: channels\[0\]\.priority: want integer, got "high"`
	if !regexp.MustCompile("^" + want + "$").MatchString(st.Error) {
		t.Errorf("status error = %q, want %s", st.Error, want)
	}
	if st.Reloads != 0 || st.SHA256 != good.SHA256 {
		t.Errorf("status = %+v", st)
	}
	wait.Eventually(t, 10*time.Second, "the failure logged", func() bool { return strings.Contains(logs.String(), "ccload.yaml:7:15: ") })

	writeFile(t, path, cfg("m2"))
	wait.Eventually(t, 10*time.Second, "recovery", serves(s, "m2"))
	if st := s.Status(); st.Error != "" || st.Reloads != 1 {
		t.Errorf("after recovery: %+v", st)
	}
}

// TestSourceReloadSkipsUnchanged: the same bytes build nothing, and a
// failed attempt followed by restoring the serving bytes clears the error.
func TestSourceReloadSkipsUnchanged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ccload.yaml")
	writeFile(t, path, cfg("m1"))
	s, _ := openAt(t, path)
	before := s.Current()
	writeFile(t, path, cfg("m1"))
	if err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	if s.Current() != before || s.Status().Reloads != 0 {
		t.Errorf("unchanged file was rebuilt: %+v", s.Status())
	}

	writeFile(t, path, badCfg)
	var ps Problems
	if err := s.Reload(); !errors.As(err, &ps) || len(ps) != 1 {
		t.Fatalf("Reload of a bad file = %v", err)
	}
	if s.Status().Error == "" || s.Status().Failures != 1 {
		t.Errorf("status = %+v", s.Status())
	}
	writeFile(t, path, cfg("m1"))
	if err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	if st := s.Status(); st.Error != "" || s.Current() != before || st.Reloads != 0 {
		t.Errorf("restored file: status = %+v", st)
	}
}

// TestSourceReloadsChangedSecretFile: a ${file:...} secret rotated in place
// is picked up even though the config file is the same.
func TestSourceReloadsChangedSecretFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ccload.yaml")
	writeFile(t, filepath.Join(dir, "key"), "sk-old-key-00001\n")
	writeFile(t, path, strings.Replace(cfg("m1"), "sk-test-key-000001", `"${file:key}"`, 1))
	s, _ := openAt(t, path)
	if got := s.Current().Channels[0].Keys[0].Reveal(); got != "sk-old-key-00001" {
		t.Fatalf("key = %q", got)
	}
	writeFile(t, filepath.Join(dir, "key"), "sk-new-key-00002\n")
	if err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	if got := s.Current().Channels[0].Keys[0].Reveal(); got != "sk-new-key-00002" {
		t.Errorf("key after Reload = %q", got)
	}

	// And the watcher sees the secret's own directory.
	watch(t, s)
	writeFile(t, filepath.Join(dir, "key"), "sk-newer-key-0003\n")
	wait.Eventually(t, 10*time.Second, "reload after the secret changed", func() bool {
		return s.Current().Channels[0].Keys[0].Reveal() == "sk-newer-key-0003"
	})
}

// TestSourceDebounce: a burst of writes becomes one reload of the last
// content.
func TestSourceDebounce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ccload.yaml")
	writeFile(t, path, cfg("m0"))
	s, _ := openAt(t, path)
	s.Debounce = 300 * time.Millisecond
	watch(t, s)
	for i := 1; i <= 10; i++ {
		writeFile(t, path, cfg("burst"+strings.Repeat("x", i)))
	}
	wait.Eventually(t, 10*time.Second, "the last write loaded", serves(s, "burst"+strings.Repeat("x", 10)))
	if n := s.Status().Reloads; n > 2 { // 1 unless the machine stalls mid-burst
		t.Errorf("%d reloads for one burst", n)
	}
}

func TestSourceIgnoresOtherFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ccload.yaml")
	writeFile(t, path, cfg("m1"))
	s, _ := openAt(t, path)
	watch(t, s)
	writeFile(t, filepath.Join(dir, "other.yaml"), "junk")
	writeFile(t, path, cfg("m2")) // a marker: once it is in, the junk event has been seen
	wait.Eventually(t, 10*time.Second, "reload", serves(s, "m2"))
	if st := s.Status(); st.Failures != 0 || st.Reloads != 1 {
		t.Errorf("status = %+v", st)
	}
}

func TestOpenInvalid(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ccload.yaml")
	writeFile(t, path, badCfg)
	_, err := Open(path)
	var ps Problems
	if !errors.As(err, &ps) || ps[0].Line != 7 || ps[0].Col != 15 || ps[0].File != path {
		t.Errorf("Open of a bad file = %v", err)
	}
	if _, err := Open(filepath.Join(t.TempDir(), "missing.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open of a missing file = %v", err)
	}
}

func TestWatchPaths(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	must(t, os.Mkdir(filepath.Join(dir, "..v1"), 0o755))
	writeFile(t, filepath.Join(dir, "..v1", "ccload.yaml"), "x")
	must(t, os.Symlink("..v1", filepath.Join(dir, "..data")))
	must(t, os.Symlink("..data/ccload.yaml", filepath.Join(dir, "ccload.yaml")))
	got := watchPaths(filepath.Join(dir, "ccload.yaml"))
	want := []string{
		filepath.Join(dir, "ccload.yaml"),
		filepath.Join(dir, "..data"),
		filepath.Join(dir, "..v1", "ccload.yaml"),
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("watchPaths = %q, want %q", got, want)
	}
	plain := filepath.Join(dir, "plain.yaml")
	if got := watchPaths(plain); len(got) != 1 || got[0] != plain {
		t.Errorf("watchPaths(plain) = %q", got)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
