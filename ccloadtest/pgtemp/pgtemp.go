// Package pgtemp runs a throwaway PostgreSQL server for tests that must stop
// and start the database under a running ccload (the outage test): its own
// data directory in a temp dir, its own loopback port, never the machine's
// shared server. It uses the initdb and pg_ctl of an installed PostgreSQL
// (/usr/lib/postgresql/*/bin, else $PATH). initdb refuses to run as root, so
// as root every command runs as the OS user "postgres" through runuser.
package pgtemp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Server is one throwaway PostgreSQL server. Its methods are not safe for
// concurrent use.
type Server struct {
	Port int
	dir  string // temp dir: data/ and the server log
	bin  string // directory of initdb and pg_ctl
	as   string // OS user to run as ("" = the current one)
}

// Start creates a cluster in a new temp dir (trust authentication, user
// postgres, fsync off) and starts it on a free loopback port. Call Remove
// when done. The error says what is missing when PostgreSQL is not
// installed or cannot run here.
func Start(ctx context.Context) (*Server, error) {
	bin, err := findBin()
	if err != nil {
		return nil, err
	}
	s := &Server{bin: bin}
	if os.Geteuid() == 0 {
		if _, err := exec.LookPath("runuser"); err != nil {
			return nil, errors.New("pgtemp: running as root needs runuser (util-linux) to run initdb as the postgres user")
		}
		s.as = "postgres"
	}
	if s.dir, err = os.MkdirTemp("", "ccload-pg-"); err != nil {
		return nil, fmt.Errorf("pgtemp: %w", err)
	}
	if s.as != "" {
		if err := chownTo(s.dir, s.as); err != nil {
			os.RemoveAll(s.dir)
			return nil, err
		}
	}
	if s.Port, err = freePort(); err != nil {
		os.RemoveAll(s.dir)
		return nil, err
	}
	if _, err := s.run(ctx, "initdb", "-D", s.data(), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync", "--no-instructions"); err != nil {
		s.Remove()
		return nil, err
	}
	if err := s.StartAgain(ctx); err != nil {
		s.Remove()
		return nil, err
	}
	return s, nil
}

// DSN is a URL for the server's "postgres" database.
func (s *Server) DSN() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable&connect_timeout=5", s.Port)
}

// Stop shuts the server down the way an operator's restart would ("fast":
// open sessions are ended) and waits until it is gone, so that a client
// then sees connection refused.
func (s *Server) Stop(ctx context.Context) error {
	_, err := s.run(ctx, "pg_ctl", "stop", "-D", s.data(), "-m", "fast", "-w", "-t", "60")
	return err
}

// StartAgain starts the server (again) on the same port and data, and
// waits until it accepts connections.
func (s *Server) StartAgain(ctx context.Context) error {
	opts := strings.Join([]string{
		"-p", strconv.Itoa(s.Port), "-k", s.data(),
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off",
		"-c", "max_connections=40", "-c", "shared_buffers=16MB",
	}, " ")
	_, err := s.run(ctx, "pg_ctl", "start", "-D", s.data(), "-l", filepath.Join(s.dir, "server.log"), "-w", "-t", "60", "-o", opts)
	return err
}

// Remove stops the server at once, if running, and deletes its files.
func (s *Server) Remove() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := os.Stat(filepath.Join(s.data(), "postmaster.pid")); err == nil {
		s.run(ctx, "pg_ctl", "stop", "-D", s.data(), "-m", "immediate", "-w", "-t", "30")
	}
	return os.RemoveAll(s.dir)
}

// Log returns the end of the server's log, for a failing test's message.
func (s *Server) Log() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

func (s *Server) data() string { return filepath.Join(s.dir, "data") }

// run runs one of the server's programs, as s.as when set, and returns its
// output; a failure carries the output.
func (s *Server) run(ctx context.Context, prog string, args ...string) (string, error) {
	path := filepath.Join(s.bin, prog)
	var cmd *exec.Cmd
	if s.as != "" {
		cmd = exec.CommandContext(ctx, "runuser", append([]string{"-u", s.as, "--", path}, args...)...)
	} else {
		cmd = exec.CommandContext(ctx, path, args...)
	}
	cmd.Dir = s.dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("pgtemp: %s %s: %w\n%s", prog, strings.Join(args, " "), err, out.String())
	}
	return out.String(), nil
}

// findBin returns the directory holding initdb and pg_ctl: the newest
// /usr/lib/postgresql/N/bin (Debian), else the one of initdb on $PATH.
func findBin() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return versionOf(b) - versionOf(a) })
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "pg_ctl")) {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		if d := filepath.Dir(p); isExec(filepath.Join(d, "pg_ctl")) {
			return d, nil
		}
	}
	return "", errors.New("pgtemp: PostgreSQL server binaries (initdb, pg_ctl) not found in /usr/lib/postgresql/*/bin or $PATH; install postgresql (Debian: apt-get install postgresql)")
}

func versionOf(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// chownTo gives dir to the OS user name, which initdb and the server run as.
func chownTo(dir, name string) error {
	u, err := user.Lookup(name)
	if err != nil {
		return fmt.Errorf("pgtemp: running as root needs an OS user %q for initdb: %w", name, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		return fmt.Errorf("pgtemp: %w", err)
	}
	return nil
}

// freePort returns a loopback TCP port nothing listens on now.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgtemp: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
