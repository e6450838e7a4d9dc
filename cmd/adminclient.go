package cmd

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/ccload/ccload/admin/adminapi"
	"github.com/ccload/ccload/config"
)

// AdminFlags say where the running server is (design §3): the commands that
// show live state talk to its admin API.
type AdminFlags struct {
	Config string // -c: read server.listen and server.admin_password
	Server string // --server: the address, overriding the file and CCLOAD_SERVER
}

// defaultConfig is read, when it exists, if neither -c nor --server says
// where the server is.
const defaultConfig = "ccload.yaml"

func addAdminFlags(c *cobra.Command, fl *AdminFlags) {
	c.Flags().StringVarP(&fl.Config, "config", "c", "", "config file to take server.listen and server.admin_password from (default ./ccload.yaml if present, trusted only for a loopback listen and a literal password)")
	c.Flags().StringVar(&fl.Server, "server", "", "admin API address, e.g. http://127.0.0.1:8080 (default $CCLOAD_SERVER, then server.listen)")
}

// adminClient returns the lazy constructor the commands' options hold.
func (f *Factory) adminClient(fl *AdminFlags) func() (*adminapi.Client, error) {
	return func() (*adminapi.Client, error) { return newAdminClient(f.lookupEnv, fl) }
}

func (f *Factory) lookupEnv(k string) (string, bool) {
	if f.LookupEnv != nil {
		return f.LookupEnv(k)
	}
	return os.LookupEnv(k)
}

// newAdminClient finds the server and the password.
//
// Address: --server, then the listen address of an explicit -c file, then
// CCLOAD_SERVER, then ./ccload.yaml's when it is a loopback address, then
// http://127.0.0.1:8080.
// Password: an explicit -c file's admin_password, then CCLOAD_PASS, then
// ./ccload.yaml's when written out literally. Only the server: section of
// a file is read, so the upstream keys it references need not be in this
// shell's environment.
//
// ./ccload.yaml is read without being asked for, so it is not trusted: it
// may come with a cloned repository. Expanding its ${VAR} or ${file:…}
// from this shell and sending the result to the host it names would hand
// that host a secret. So it is parsed with no environment and no files
// (an expansion fails, and the file is then ignored), and lends only a
// loopback listen address: the password can only go to this machine.
func newAdminClient(lookup func(string) (string, bool), fl *AdminFlags) (*adminapi.Client, error) {
	env := func(k string) string { v, _ := lookup(k); return v }
	file, explicit := fl.Config, fl.Config != ""
	if !explicit && ((fl.Server == "" && env("CCLOAD_SERVER") == "") || env("CCLOAD_PASS") == "") {
		if _, err := os.Stat(defaultConfig); err == nil {
			file = defaultConfig
		}
	}
	var srv config.Server
	if file != "" {
		env := config.Env{Lookup: lookup, ReadFile: os.ReadFile}
		if !explicit {
			env = config.Env{Lookup: noVariables, ReadFile: noFiles}
		}
		s, err := readServerSection(file, env)
		switch {
		case err != nil && explicit:
			return nil, &exitError{code: exitFail, err: err}
		case err != nil:
		case !explicit && !loopbackListen(s.Listen):
			// Not this machine: neither its address nor its password.
		default:
			srv = s
		}
	}

	addr := fl.Server
	switch {
	case addr != "":
	case explicit && srv.Listen != "":
		addr = listenURL(srv.Listen)
	case env("CCLOAD_SERVER") != "":
		addr = env("CCLOAD_SERVER")
	case srv.Listen != "":
		addr = listenURL(srv.Listen)
	default:
		addr = listenURL(config.DefaultServer.Listen)
	}
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}

	pass := srv.AdminPassword.Reveal()
	if !explicit || pass == "" {
		if p := env("CCLOAD_PASS"); p != "" {
			pass = p
		}
	}
	if pass == "" {
		return nil, &exitError{code: exitFail, err: errors.New(
			"no admin password: set CCLOAD_PASS, or use -c FILE whose server.admin_password is set")}
	}
	return adminapi.NewClient(addr, pass, nil), nil
}

func noVariables(string) (string, bool) { return "", false }

func noFiles(string) ([]byte, error) {
	return nil, errors.New("an implicit ./ccload.yaml may not read files; use -c FILE")
}

// loopbackListen reports whether a listen address is reached on this
// machine: a loopback host, localhost, or an unspecified one (listenURL
// turns that into loopback). "" (no listen key) is the default, loopback.
func loopbackListen(listen string) bool {
	if listen == "" {
		return true
	}
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return false
	}
	switch host {
	case "", "0.0.0.0", "::", "localhost":
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// listenURL turns a listen address into one to connect to: an unspecified
// host (":8080", "0.0.0.0:8080", "[::]:8080") becomes loopback.
func listenURL(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "http://" + listen
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// readServerSection validates only `version:` and `server:` of a config
// file. The other top-level sections are blanked line for line before
// parsing, so positions in errors stay those of the file.
func readServerSection(file string, env config.Env) (config.Server, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return config.Server{}, fmt.Errorf("config: %w", err)
	}
	snap, err := config.Parse(file, keepSections(data, "version", "server"), env)
	if err != nil {
		return config.Server{}, err
	}
	return snap.Server, nil
}

// keepSections returns data with the lines of every top-level key but keep
// replaced by empty lines. A document that is not a block mapping is
// returned as it is.
func keepSections(data []byte, keep ...string) []byte {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return data
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode || root.Style&yaml.FlowStyle != 0 {
		return data
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	drop := make([]bool, len(lines))
	for i := 0; i+1 < len(root.Content); i += 2 {
		k := root.Content[i]
		from, to := k.Line-1, len(lines)
		if i+2 < len(root.Content) {
			to = root.Content[i+2].Line - 1
		}
		wanted := false
		for _, name := range keep {
			wanted = wanted || k.Value == name
		}
		for l := from; l < to && l < len(lines); l++ {
			drop[l] = !wanted
		}
	}
	var out bytes.Buffer
	for i, l := range lines {
		if drop[i] {
			if bytes.HasSuffix(l, []byte("\n")) {
				out.WriteByte('\n')
			}
			continue
		}
		out.Write(l)
	}
	return out.Bytes()
}
