package cmd

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
)

// The demo's subscription account channel: a codex (ChatGPT) account
// signed in against the mock sign-in server, answered by the mock Codex
// backend, both on demoAccountAddr beside the mock upstream.
const (
	demoAccountAddr    = "127.0.0.1:9902"
	demoAccountChannel = "chatgpt-account"
	demoAccountName    = "demo"
	demoAccountModel   = "gpt-5.4"
)

// demoAccounts serves on addr the mock sign-in server and, under
// /backend-api/codex/, the mock Codex backend in front of inner.
func demoAccounts(addr string, inner *mockupstream.Server) (base string, backend *mockupstream.CodexBackend, stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, nil, err
	}
	signin := &mockupstream.SignIn{Account: "acct-demo"}
	backend = &mockupstream.CodexBackend{SignIn: signin, Inner: inner}
	mux := http.NewServeMux()
	mux.Handle("/backend-api/codex/", backend)
	mux.Handle("/", signin)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), backend, func() { srv.Close() }, nil
}

// demoAccountConfig writes, next to the demo database, a copy of the config
// file with the account channel added (and a server.secret_key, which
// seals the stored credential, when the file has none), so the example
// file itself stays usable without a key. It returns the copy's path, or
// file itself when it already has an oauth channel.
func demoAccountConfig(file, dir, mockBase string) (string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return "", fmt.Errorf("%s: %w", file, err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return "", fmt.Errorf("%s: not a mapping", file)
	}
	root := doc.Content[0]
	channels := mapValue(root, "channels")
	if channels == nil || channels.Kind != yaml.SequenceNode {
		return "", fmt.Errorf("%s: no channels list", file)
	}
	for _, ch := range channels.Content {
		if v := mapValue(ch, "oauth"); v != nil && v.Value != "" {
			return file, nil
		}
	}
	server := mapValue(root, "server")
	if server == nil {
		return "", fmt.Errorf("%s: no server section", file)
	}
	if mapValue(server, "secret_key") == nil {
		key := make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return "", err
		}
		server.Content = append(server.Content, scalar("secret_key"), scalar("${CCLOAD_SECRET_KEY:-"+hex.EncodeToString(key)+"}"))
	}
	var ch yaml.Node
	snippet := fmt.Sprintf(`name: %s
priority: 10
oauth: codex
accounts: [%s]
urls: ["%s/backend-api/codex"]
oauth_issuer: "%s"
models: [%s]
`, demoAccountChannel, demoAccountName, mockBase, mockBase, demoAccountModel)
	if err := yaml.Unmarshal([]byte(snippet), &ch); err != nil {
		return "", err
	}
	channels.Content = append(channels.Content, ch.Content[0])
	out, err := yaml.Marshal(&doc)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "demo.yaml")
	header := "# Written by `ccload demo` from " + file + " with the demo account channel " + demoAccountChannel + " added.\n# Edit " + file + " instead: the demo rewrites this file when it starts.\n"
	return path, os.WriteFile(path, append([]byte(header), out...), 0o600)
}

func mapValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func scalar(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: v} }

// demoSignIn signs the demo account in the way `ccload login codex` does
// by default (browser, PKCE, local callback), with this function as the
// browser: the mock sign-in server approves at once and redirects to the
// callback. It returns login's last line ("signed in …").
func demoSignIn(ctx context.Context, file string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	browser := make(chan error, 1)
	var out strings.Builder
	opts := &LoginOptions{
		IO: IOStreams{In: strings.NewReader(""), Out: &out, Err: io.Discard}, Config: file, Provider: "codex",
		Channel: demoAccountChannel, Account: demoAccountName, Port: 0, // any free port for the callback
		OpenURL: func(u string) {
			resp, err := http.Get(u) // follows the redirect to the local callback
			if err == nil {
				resp.Body.Close()
			}
			browser <- err
		},
	}
	if err := loginRun(ctx, opts); err != nil {
		select {
		case berr := <-browser:
			return "", errors.Join(err, berr)
		default:
			return "", err
		}
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	return lines[len(lines)-1], nil
}
