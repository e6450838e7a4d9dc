package config

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Watch reloads the file when it changes, until ctx is done; it then
// returns nil. It returns an error only when watching cannot start.
//
// It watches the file's directory, not the file, and filters events by
// name: editors that write a temporary file and rename it over the config,
// `git checkout`, and Kubernetes ConfigMap updates (an atomic swap of the
// `..data` symlink the file resolves through) all replace the file rather
// than write it, and a watch on the old file would never fire again. When
// the path is a symlink, or goes through one, every link on the way and the
// final file are watched too, and so are the files the config reads with
// ${file:...}. A burst of events is coalesced into one Reload after
// Debounce of quiet. Call Watch once per Source.
func (s *Source) Watch(ctx context.Context) error {
	abs, err := filepath.Abs(s.path)
	if err != nil {
		return fmt.Errorf("config: watch: %w", err)
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("config: watch: %w", err)
	}
	defer w.Close()
	ws := &watchSet{w: w, dirs: map[string]bool{}}
	if _, err := ws.update(abs, s.Current()); err != nil {
		return fmt.Errorf("config: watch: %w", err)
	}
	s.watchOnce.Do(func() { close(s.watching) })

	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var fire <-chan time.Time // nil while no reload is pending
	for {
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if ev.Op == fsnotify.Chmod || !ws.names[filepath.Clean(ev.Name)] {
				continue
			}
			timer.Reset(s.Debounce)
			fire = timer.C
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			s.Logger.Warn("config watch error", "file", s.path, "error", err.Error())
			if errors.Is(err, fsnotify.ErrEventOverflow) { // events were lost: look anyway
				timer.Reset(s.Debounce)
				fire = timer.C
			}
		case <-fire:
			fire = nil
			s.reloadWatched(ws, abs)
		}
	}
}

// reloadWatched reloads with the watches following the files as they are
// now. Links are followed before the file is read, so a write to a new link
// target after the read still raises an event; and when the reload brings
// new ${file:...} directories, it reloads once more after watching them,
// which costs a hash when nothing changed in between.
func (s *Source) reloadWatched(ws *watchSet, abs string) {
	for range 3 {
		if _, err := ws.update(abs, s.Current()); err != nil {
			s.Logger.Warn("config watch error", "file", s.path, "error", err.Error())
		}
		_ = s.Reload() // logged and recorded in Status by Reload
		added, err := ws.update(abs, s.Current())
		if err != nil {
			s.Logger.Warn("config watch error", "file", s.path, "error", err.Error())
		}
		if !added {
			return
		}
	}
}

// watchSet is the directories watched and the names in them that matter.
type watchSet struct {
	w     *fsnotify.Watcher
	dirs  map[string]bool
	names map[string]bool
}

// update recomputes the names that matter for the config file at abs and
// the files snap read, and watches exactly their directories. Failing to
// watch the config file's own directory is an error; other directories may
// be missing for a while (a ${file:...} default covers that) and are
// skipped. added reports whether a directory was newly watched.
func (ws *watchSet) update(abs string, snap *Snapshot) (added bool, err error) {
	names := map[string]bool{}
	dirs := map[string]bool{}
	for _, p := range watchPaths(abs) {
		names[p], dirs[filepath.Dir(p)] = true, true
	}
	for dep := range snap.deps {
		if d, err := filepath.Abs(dep); err == nil {
			for _, p := range watchPaths(d) {
				names[p], dirs[filepath.Dir(p)] = true, true
			}
		}
	}
	main := filepath.Dir(watchPaths(abs)[0])
	for dir := range dirs {
		if ws.dirs[dir] {
			continue
		}
		if err := ws.w.Add(dir); err != nil {
			if dir == main {
				return added, err
			}
			delete(dirs, dir)
			continue
		}
		added = true
	}
	for dir := range ws.dirs {
		if !dirs[dir] {
			_ = ws.w.Remove(dir) // it may be gone already (an old ConfigMap generation)
		}
	}
	ws.dirs, ws.names = dirs, names
	return added, nil
}

// watchPaths returns the paths whose change can change what reading p
// returns: p, and when p is a symlink or goes through a symlinked directory
// that sits next to a path already listed, that link and what it points to,
// in turn. Each path is written as its directory with symlinks resolved,
// plus its base name, because that is how fsnotify names events in a
// watched directory. A link outside the listed directories (a /var ->
// /private/var system link) is followed but not listed.
func watchPaths(p string) []string {
	var out []string
	dirs := map[string]bool{}
	for range 40 { // bound link chains, as the kernel does
		dir, base := filepath.Split(filepath.Clean(p))
		rdir, err := filepath.EvalSymlinks(dir)
		if err != nil {
			rdir = filepath.Clean(dir)
		}
		for _, l := range linksIn(dir) {
			if dirs[filepath.Dir(l)] && !slices.Contains(out, l) {
				out = append(out, l)
			}
		}
		real := filepath.Join(rdir, base)
		if slices.Contains(out, real) {
			break
		}
		out = append(out, real)
		dirs[rdir] = true
		target, err := os.Readlink(real)
		if err != nil {
			break // not a link (or gone): the end of the chain
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(rdir, target)
		}
		p = target
	}
	return out
}

// linksIn returns the symlinks among the directories of path dir, each as
// resolved parent directory plus name.
func linksIn(dir string) []string {
	dir = filepath.Clean(dir)
	vol := filepath.VolumeName(dir)
	cur := vol + string(filepath.Separator)
	var out []string
	for _, part := range strings.Split(strings.TrimPrefix(dir[len(vol):], string(filepath.Separator)), string(filepath.Separator)) {
		if part == "" {
			continue
		}
		next := filepath.Join(cur, part)
		fi, err := os.Lstat(next)
		if err != nil {
			break
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			parent, err := filepath.EvalSymlinks(cur)
			if err != nil {
				parent = cur
			}
			out = append(out, filepath.Join(parent, part))
		}
		cur = next
	}
	return out
}
