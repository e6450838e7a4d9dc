package cmd

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine/account"
	"github.com/ccload/ccload/internal/oauth"
	"github.com/ccload/ccload/store"
)

// LoginOptions are the flags of `ccload login`.
type LoginOptions struct {
	IO        IOStreams
	LookupEnv func(string) (string, bool)
	Config    string
	Provider  string
	Channel   string
	Account   string

	Token     string // --token: a personal access token
	AccountID string // --account-id: the provider's account id for --token
	Import    string // --import: the Codex CLI's auth.json
	Device    bool   // --device: device code
	Paste     bool   // --paste: paste the redirect URL instead of a local callback
	Port      int    // local callback port (browser sign-in)

	// OpenURL is called with the sign-in URL of the browser flow (after it
	// is printed); nil prints only. Tests act as the browser here.
	OpenURL func(string)
	// HTTP sends the OAuth requests; nil = a client with a 30 s timeout.
	HTTP *http.Client
	// Sleep waits between device-code polls (tests shorten it).
	Sleep func(context.Context, time.Duration) error
	Now   func() time.Time
}

// NewCmdLogin builds `ccload login`.
func NewCmdLogin(f *Factory, runF func(*LoginOptions) error) *cobra.Command {
	opts := &LoginOptions{IO: f.IO, LookupEnv: f.LookupEnv}
	c := &cobra.Command{
		Use:   "login codex|xai --channel C --account A",
		Short: "Sign a subscription account in and store its credential, encrypted, in the database",
		Long: `Sign an account of an oauth channel in. The credential goes to the database
of the config's storage: section, sealed with server.secret_key; a running
server (every instance on that database) uses it within seconds.

codex ways to sign in:
  (default)        browser sign-in with PKCE: open the printed URL; the
                   answer comes back to a local callback on --port (1455)
  --paste          the same without a local callback (a headless machine):
                   open the URL anywhere, then paste the address the
                   browser was sent to (http://localhost:1455/auth/callback?code=...)
  --device         device code: open the printed page and enter the code
  --import FILE    take the tokens of the Codex CLI's auth.json
                   (~/.codex/auth.json); do not keep using that file with
                   the Codex CLI afterwards: refresh tokens are single-use
  --token TOKEN    a personal access token (no refresh)
xai: the device-code flow (RFC 8628) against oauth_issuer.`,
		Example: `  ccload login codex --channel chatgpt --account alice
  ccload login codex --channel chatgpt --account bob --device
  ccload login codex --channel chatgpt --account carol --import ~/.codex/auth.json
  ccload login xai --channel grok --account alice`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Provider = args[0]
			if runF != nil {
				return runF(opts)
			}
			return loginRun(c.Context(), opts)
		},
	}
	c.Flags().StringVarP(&opts.Config, "config", "c", "ccload.yaml", "config file")
	c.Flags().StringVar(&opts.Channel, "channel", "", "oauth channel (required)")
	c.Flags().StringVar(&opts.Account, "account", "", "account name, one of the channel's accounts: (required)")
	c.Flags().StringVar(&opts.Token, "token", "", "sign in with a personal access token")
	c.Flags().StringVar(&opts.AccountID, "account-id", "", "the provider's account id, for --token when the token does not carry it")
	c.Flags().StringVar(&opts.Import, "import", "", "import the Codex CLI's auth.json, or a credential object (ccLoad's oauth_credential)")
	c.Flags().BoolVar(&opts.Device, "device", false, "sign in with a device code")
	c.Flags().BoolVar(&opts.Paste, "paste", false, "browser sign-in without a local callback: paste the redirect URL")
	c.Flags().IntVar(&opts.Port, "port", account.CodexCallbackPort, "local callback port of the browser sign-in")
	_ = c.MarkFlagRequired("channel")
	_ = c.MarkFlagRequired("account")
	return c
}

// accountTarget is what login, logout and accounts resolve first.
type accountTarget struct {
	snap *config.Snapshot
	ch   *config.Channel
	key  []byte
	st   store.Store
}

// openAccounts loads the config and opens its database directly: login
// and logout work whether or not a server runs.
func openAccounts(ctx context.Context, file string, lookup func(string) (string, bool)) (*accountTarget, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, &exitError{code: exitFail, err: fmt.Errorf("config: %w", err)}
	}
	env := config.OSEnv()
	if lookup != nil {
		env.Lookup = lookup
	}
	snap, err := config.Parse(file, data, env)
	if err != nil {
		return nil, &exitError{code: exitFail, err: err}
	}
	t := &accountTarget{snap: snap}
	if key, ok := config.ParseSecretKey(snap.Server.SecretKey.Reveal()); ok {
		t.key = key
	}
	t.st, err = store.Open(ctx, snap.Storage.Driver, snap.Storage.DSN.Reveal())
	if err != nil {
		return nil, &exitError{code: exitFail, err: fmt.Errorf("storage (%s): %w", snap.Storage.Driver, err)}
	}
	return t, nil
}

// channel finds an oauth channel that lists account.
func (t *accountTarget) channel(name, acct, provider string) error {
	ch := t.snap.Channel(name)
	switch {
	case ch == nil:
		return &exitError{code: exitUsage, err: fmt.Errorf("no channel %q in the config", name)}
	case ch.OAuth == "":
		return &exitError{code: exitUsage, err: fmt.Errorf("channel %q is not an oauth channel (add oauth: codex or xai)", name)}
	case provider != "" && ch.OAuth != provider:
		return &exitError{code: exitUsage, err: fmt.Errorf("channel %q signs in with %s, not %s", name, ch.OAuth, provider)}
	case acct != "" && !containsString(ch.Accounts, acct):
		return &exitError{code: exitUsage, err: fmt.Errorf("channel %q has no account %q: add it to its accounts: list first", name, acct)}
	case t.key == nil:
		return &exitError{code: exitFail, err: errors.New("server.secret_key is not set: it encrypts the stored credentials (openssl rand -hex 32)")}
	}
	t.ch = ch
	return nil
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func loginRun(ctx context.Context, opts *LoginOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if opts.Provider != config.OAuthCodex && opts.Provider != config.OAuthXAI {
		return &exitError{code: exitUsage, err: fmt.Errorf("unknown provider %q (want codex or xai)", opts.Provider)}
	}
	ways := 0
	for _, on := range []bool{opts.Token != "", opts.Import != "", opts.Device, opts.Paste} {
		if on {
			ways++
		}
	}
	if ways > 1 {
		return &exitError{code: exitUsage, err: errors.New("choose one of --token, --import, --device and --paste")}
	}
	if opts.HTTP == nil {
		opts.HTTP = &http.Client{Timeout: 30 * time.Second}
	}
	if opts.Sleep == nil {
		opts.Sleep = oauth.Sleep
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	t, err := openAccounts(ctx, opts.Config, opts.LookupEnv)
	if err != nil {
		return err
	}
	defer t.st.Close()
	if err := t.channel(opts.Channel, opts.Account, opts.Provider); err != nil {
		return err
	}
	var cred account.Credential
	switch {
	case opts.Token != "":
		cred = tokenCredential(opts.Token, opts.AccountID, opts.Now())
	case opts.Import != "":
		cred, err = importAuth(opts.Import, opts.Provider, opts.Now())
	case opts.Provider == config.OAuthXAI:
		cred, err = deviceLogin(ctx, opts, t.ch)
	case opts.Device:
		cred, err = codexDeviceLogin(ctx, opts, t.ch)
	default:
		cred, err = codexBrowserLogin(ctx, opts, t.ch)
	}
	if err != nil {
		return &exitError{code: exitFail, err: fmt.Errorf("sign-in failed: %w", err)}
	}
	if t.ch.OAuth == config.OAuthCodex && cred.AccountID == "" {
		return &exitError{code: exitFail, err: errors.New("the credential carries no ChatGPT account id (pass --account-id)")}
	}
	blob, err := account.Seal(t.key, t.ch.Name, opts.Account, cred)
	if err != nil {
		return &exitError{code: exitFail, err: err}
	}
	err = t.st.PutAccount(ctx, store.Account{
		Channel: t.ch.Name, Account: opts.Account, Provider: t.ch.OAuth, Credential: blob,
		SubjectFP: account.Fingerprint(cred.AccountID), AccessExpires: cred.Expires, LastRefresh: opts.Now(),
		State: store.AccountOK,
	})
	if err != nil {
		return &exitError{code: exitFail, err: err}
	}
	exp := "unknown"
	if !cred.Expires.IsZero() {
		exp = cred.Expires.UTC().Format(time.RFC3339)
	}
	fmt.Fprintf(opts.IO.Out, "signed in %s/%s (provider account %s); access token expires %s; refresh %s\n",
		t.ch.Name, opts.Account, orDash(account.Fingerprint(cred.AccountID)), exp, yesNo(cred.RefreshToken != "", "automatic", "none (sign in again when it expires)"))
	return nil
}

func yesNo(b bool, yes, no string) string {
	if b {
		return yes
	}
	return no
}

// tokenCredential is a personal access token: no refresh; the account id
// and expiry come from its claims when it is a JWT.
func tokenCredential(tok, accountID string, now time.Time) account.Credential {
	c := account.Credential{AccessToken: strings.TrimSpace(tok), AccountID: accountID, Issued: now}
	c.Expires = oauth.JWTExpiry(c.AccessToken)
	if c.AccountID == "" {
		c.AccountID = account.CodexAccountID(c.AccessToken)
	}
	return c
}

// importAuth reads the Codex CLI's auth.json: {"tokens": {"id_token",
// "access_token", "refresh_token", "account_id"}, "last_refresh"}
// (codex-rs/login/src/auth/storage.rs AuthDotJson, token_data.rs), or a
// flat credential object as ccLoad keeps it for codex_oauth and xai_oauth
// channels (the same token fields at the top, with expires_at or expiry
// when the access token is no JWT).
func importAuth(file, provider string, now time.Time) (account.Credential, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return account.Credential{}, err
	}
	var v struct {
		Tokens *struct {
			IDToken      json.RawMessage `json:"id_token"`
			AccessToken  string          `json:"access_token"`
			RefreshToken string          `json:"refresh_token"`
			AccountID    string          `json:"account_id"`
		} `json:"tokens"`
		LastRefresh time.Time `json:"last_refresh"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return account.Credential{}, fmt.Errorf("%s is not a Codex auth.json nor a credential object: %v", file, err)
	}
	var expires time.Time // a flat object's own expiry, when its token is no JWT
	if v.Tokens == nil {
		// A flat credential object, as gateways such as ccLoad keep it
		// (its oauth_credential column): the same token fields at the top.
		var flat struct {
			IDToken          string          `json:"id_token"`
			AccessToken      string          `json:"access_token"`
			RefreshToken     string          `json:"refresh_token"`
			AccountID        string          `json:"account_id"`
			ChatGPTAccountID string          `json:"chatgpt_account_id"`
			ExpiresAt        json.RawMessage `json:"expires_at"`
			Expiry           time.Time       `json:"expiry"`
		}
		if json.Unmarshal(b, &flat) == nil && flat.AccessToken != "" {
			idJSON, _ := json.Marshal(flat.IDToken)
			v.Tokens = &struct {
				IDToken      json.RawMessage `json:"id_token"`
				AccessToken  string          `json:"access_token"`
				RefreshToken string          `json:"refresh_token"`
				AccountID    string          `json:"account_id"`
			}{idJSON, flat.AccessToken, flat.RefreshToken, firstNonEmpty(flat.AccountID, flat.ChatGPTAccountID)}
			expires = flatExpiry(flat.ExpiresAt, flat.Expiry)
		}
	}
	if v.Tokens == nil || v.Tokens.AccessToken == "" {
		return account.Credential{}, fmt.Errorf("%s has no access token (signed in with an API key?)", file)
	}
	var id string
	if json.Unmarshal(v.Tokens.IDToken, &id) != nil {
		var obj struct {
			Raw string `json:"raw_jwt"`
		}
		_ = json.Unmarshal(v.Tokens.IDToken, &obj)
		id = obj.Raw
	}
	c := account.Credential{AccessToken: v.Tokens.AccessToken, RefreshToken: v.Tokens.RefreshToken, IDToken: id, AccountID: v.Tokens.AccountID}
	c.Expires = oauth.JWTExpiry(c.AccessToken)
	if c.Expires.IsZero() {
		c.Expires = expires
	}
	c.Issued = oauth.JWTIssuedAt(c.AccessToken)
	if c.Issued.IsZero() {
		c.Issued = v.LastRefresh
	}
	if c.Issued.IsZero() {
		c.Issued = now
	}
	switch {
	case c.AccountID != "":
	case provider == config.OAuthCodex:
		c.AccountID = account.CodexAccountID(id)
	default:
		c.AccountID, _ = oauth.Claims(id)["sub"].(string) // as FromTokens names an xAI account
	}
	return c, nil
}

// flatExpiry reads a credential object's expiry: expires_at in unix
// seconds (or milliseconds) or RFC 3339, or Go's oauth2 "expiry".
func flatExpiry(at json.RawMessage, expiry time.Time) time.Time {
	var n int64
	var s string
	switch {
	case json.Unmarshal(at, &n) == nil && n > 1e12:
		return time.UnixMilli(n).UTC()
	case n > 0:
		return time.Unix(n, 0).UTC()
	case json.Unmarshal(at, &s) == nil && s != "":
		t, _ := time.Parse(time.RFC3339, s)
		return t
	}
	return expiry
}

// codexDeviceLogin runs the Codex device-code sign-in (facts in
// engine/account/provider.go).
func codexDeviceLogin(ctx context.Context, opts *LoginOptions, ch *config.Channel) (account.Credential, error) {
	body, _ := json.Marshal(map[string]string{"client_id": ch.OAuthClientID})
	b, status, err := oauth.Do(ctx, opts.HTTP, ch.OAuthIssuer+"/api/accounts/deviceauth/usercode", "application/json", body)
	if err != nil {
		return account.Credential{}, err
	}
	if status != 200 {
		return account.Credential{}, fmt.Errorf("device code request answered %d (device sign-in may not be enabled; try the browser sign-in)", status)
	}
	var uc struct {
		ID       string          `json:"device_auth_id"`
		UserCode string          `json:"user_code"`
		Interval json.RawMessage `json:"interval"`
	}
	if err := json.Unmarshal(b, &uc); err != nil || uc.ID == "" {
		return account.Credential{}, errors.New("device code answer without a device_auth_id")
	}
	interval := parseInterval(uc.Interval)
	fmt.Fprintf(opts.IO.Out, "Open %s/codex/device and enter the code %s (it expires in 15 minutes; never share it).\n", ch.OAuthIssuer, uc.UserCode)
	poll, _ := json.Marshal(map[string]string{"device_auth_id": uc.ID, "user_code": uc.UserCode})
	deadline := opts.Now().Add(15 * time.Minute)
	for {
		if err := opts.Sleep(ctx, interval); err != nil {
			return account.Credential{}, err
		}
		b, status, err := oauth.Do(ctx, opts.HTTP, ch.OAuthIssuer+"/api/accounts/deviceauth/token", "application/json", poll)
		if err != nil {
			return account.Credential{}, err
		}
		if status == 403 || status == 404 {
			if opts.Now().After(deadline) {
				return account.Credential{}, errors.New("the device code expired before the sign-in was approved")
			}
			continue
		}
		if status != 200 {
			return account.Credential{}, fmt.Errorf("device sign-in answered %d", status)
		}
		var code struct {
			Code     string `json:"authorization_code"`
			Verifier string `json:"code_verifier"`
		}
		if err := json.Unmarshal(b, &code); err != nil || code.Code == "" {
			return account.Credential{}, errors.New("device sign-in answer without an authorization code")
		}
		tok, err := account.CodexExchange(ctx, opts.HTTP, ch.OAuthIssuer, ch.OAuthClientID, ch.OAuthIssuer+"/deviceauth/callback", code.Verifier, code.Code)
		if err != nil {
			return account.Credential{}, err
		}
		return account.FromTokens(ch.OAuth, tok, account.Credential{}, opts.Now()), nil
	}
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

func parseInterval(raw json.RawMessage) time.Duration {
	s := strings.Trim(string(raw), `" `)
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		n = 5
	}
	return time.Duration(n) * time.Second
}

// codexBrowserLogin runs the PKCE sign-in: a local callback on opts.Port,
// or with --paste the redirect URL read from the terminal.
func codexBrowserLogin(ctx context.Context, opts *LoginOptions, ch *config.Channel) (account.Credential, error) {
	verifier, challenge := oauth.PKCE()
	state := oauth.State()
	port := opts.Port
	var ln net.Listener
	if !opts.Paste {
		var err error
		ln, err = net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			return account.Credential{}, fmt.Errorf("local callback: %w (use --paste on a machine without a browser)", err)
		}
		defer ln.Close()
		port = ln.Addr().(*net.TCPAddr).Port
	}
	redirect := "http://localhost:" + strconv.Itoa(port) + "/auth/callback"
	authURL := account.CodexAuthorizeURL(ch.OAuthIssuer, ch.OAuthClientID, redirect, challenge, state)
	fmt.Fprintf(opts.IO.Out, "Open this URL in a browser and sign in:\n\n  %s\n\n", authURL)
	var code string
	var err error
	if opts.Paste {
		fmt.Fprint(opts.IO.Out, "Then paste the address the browser was sent to (it starts with "+redirect+"):\n")
		if opts.OpenURL != nil {
			go opts.OpenURL(authURL)
		}
		code, err = pastedCode(opts.IO, state)
	} else {
		if opts.OpenURL != nil {
			go opts.OpenURL(authURL)
		}
		code, err = awaitCallback(ctx, ln, state)
	}
	if err != nil {
		return account.Credential{}, err
	}
	tok, err := account.CodexExchange(ctx, opts.HTTP, ch.OAuthIssuer, ch.OAuthClientID, redirect, verifier, code)
	if err != nil {
		return account.Credential{}, err
	}
	return account.FromTokens(ch.OAuth, tok, account.Credential{}, opts.Now()), nil
}

// callbackCode checks a redirect's query and returns its code.
func callbackCode(q url.Values, state string) (string, error) {
	switch {
	case q.Get("error") != "":
		return "", fmt.Errorf("the sign-in was refused: %s", q.Get("error"))
	case q.Get("state") != state:
		return "", errors.New("the redirect's state does not match this sign-in (a stale or forged redirect)")
	case q.Get("code") == "":
		return "", errors.New("the redirect carries no authorization code")
	}
	return q.Get("code"), nil
}

func pastedCode(io IOStreams, state string) (string, error) {
	line, err := bufio.NewReader(io.In).ReadString('\n')
	if err != nil && strings.TrimSpace(line) == "" {
		return "", errors.New("no redirect URL pasted")
	}
	u, err := url.Parse(strings.TrimSpace(line))
	if err != nil {
		return "", errors.New("the pasted text is not a URL")
	}
	return callbackCode(u.Query(), state)
}

// awaitCallback serves the local callback until a redirect with the right
// state arrives.
func awaitCallback(ctx context.Context, ln net.Listener, state string) (string, error) {
	type result struct {
		code string
		err  error
	}
	done := make(chan result, 1)
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/auth/callback" {
			http.NotFound(w, r)
			return
		}
		code, err := callbackCode(r.URL.Query(), state)
		if err != nil {
			http.Error(w, "ccload sign-in: "+err.Error(), 400)
			if r.URL.Query().Get("state") != state {
				return // not ours: keep waiting
			}
		} else {
			fmt.Fprintln(w, "ccload: signed in. You can close this page.")
		}
		select {
		case done <- result{code, err}:
		default:
		}
	})}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	select {
	case r := <-done:
		return r.code, r.err
	case <-ctx.Done():
		return "", errors.New("no sign-in arrived at the local callback within 10 minutes")
	}
}

// deviceLogin runs the RFC 8628 device flow against the issuer's
// discovered endpoints (xAI).
func deviceLogin(ctx context.Context, opts *LoginOptions, ch *config.Channel) (account.Credential, error) {
	md, err := oauth.Discover(ctx, opts.HTTP, ch.OAuthIssuer)
	if err != nil {
		return account.Credential{}, err
	}
	if md.DeviceAuthorizationEndpoint == "" {
		return account.Credential{}, errors.New("the issuer offers no device_authorization_endpoint")
	}
	d, err := oauth.StartDevice(ctx, opts.HTTP, md.DeviceAuthorizationEndpoint, ch.OAuthClientID, "openid offline_access")
	if err != nil {
		return account.Credential{}, err
	}
	where := d.VerificationURI
	if d.VerificationURIComplete != "" {
		where = d.VerificationURIComplete
	}
	fmt.Fprintf(opts.IO.Out, "Open %s and enter the code %s\n", where, d.UserCode)
	tok, err := oauth.PollDevice(ctx, opts.HTTP, md.TokenEndpoint, ch.OAuthClientID, d, opts.Sleep)
	if err != nil {
		return account.Credential{}, err
	}
	return account.FromTokens(ch.OAuth, tok, account.Credential{}, opts.Now()), nil
}
