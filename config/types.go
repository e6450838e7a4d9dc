package config

import (
	"encoding/json"
	"net/netip"
	"slices"
	"time"

	"github.com/ccload/ccload/protocol"
)

// Snapshot is one validated, immutable view of the config file.
//
// It is read-only: never mutate it or shallow-copy it. A reload builds a new
// Snapshot and swaps it in whole; requests in flight keep the one they loaded.
type Snapshot struct {
	File     string    // path it was loaded from ("" for Parse of bytes)
	LoadedAt time.Time // when this snapshot was built
	SHA256   string    // hex sha256 of the file bytes, to skip no-op reloads

	Version  int
	Server   Server
	Storage  Storage
	Routing  Routing
	Channels []*Channel       // in file order
	Tokens   []*Token         // in file order
	Pricing  map[string]Price // model name -> price per million tokens

	PriceCatalog PriceCatalog

	// Indexes, built once by the loader.
	byModel   map[string][]Route // client model name -> routes, channels in file order
	byName    map[string]*Channel
	byTokenSH map[string]*Token // lowercase hex sha256 of the token -> token

	// deps are the files ${file:...} read: path -> sha256 hex of the
	// contents ("" when unreadable), so a reload notices a changed secret
	// file even when the config file is the same.
	deps map[string]string
}

// Route is one channel that serves one client-visible model.
type Route struct {
	Channel  *Channel
	Model    string // the model name the client asked for
	Upstream string // the model name sent upstream (Model when not renamed)
}

// Routes returns the enabled channels serving model (enabled models only),
// in file order. The slice is shared: do not modify it.
func (s *Snapshot) Routes(model string) []Route { return s.byModel[model] }

// Channel returns the channel with that name, or nil.
func (s *Snapshot) Channel(name string) *Channel { return s.byName[name] }

// TokenBySHA256 returns the token whose sha256 (lowercase hex) is sum, or nil.
func (s *Snapshot) TokenBySHA256(sum string) *Token { return s.byTokenSH[sum] }

// HasDebug reports whether any channel captures the upstream traffic of
// the requests it serves (`debug: true`).
func (s *Snapshot) HasDebug() bool {
	return slices.ContainsFunc(s.Channels, func(c *Channel) bool { return c.Debug })
}

// Server is the `server:` section.
type Server struct {
	Listen        string // host:port
	AdminPassword Secret
	// MetricsToken, when set, is a Bearer token that may read /metrics
	// and the details of /health, and nothing else (a Prometheus scrape
	// needs no admin password).
	MetricsToken Secret
	MaxBodyBytes Size
	// Pprof serves the Go runtime profiles under /admin/debug/pprof/
	// (admin password required). Off by default.
	Pprof bool
	// Limits bound what one client connection may hold (limits.go).
	Limits ServerLimits
	// WebSockets bounds the Responses WebSocket transport (websockets.go).
	WebSockets WebSockets
	// TrustedProxies are the peers whose X-Forwarded-For and
	// X-Forwarded-Proto are believed (client IP, Secure cookie).
	TrustedProxies []netip.Prefix
	// DebugMaxBytes cuts each body a debug capture keeps (the
	// upstream request and response of a channel or token with debug: true).
	DebugMaxBytes Size
	// SecretKey encrypts the credentials of signed-in accounts in the
	// database (ParseSecretKey gives its 32 bytes).
	SecretKey Secret
}

// Storage is the `storage:` section.
type Storage struct {
	Driver       string // sqlite | mysql | postgres
	DSN          Secret // may hold a password
	LogRetention Duration
	// LogQueue is how many request log rows wait in memory while the
	// database is slow or down; more are dropped and counted. Read at start.
	LogQueue int
	// Shared marks the database as shared by several instances (scale-out,
	// docs/scale-out.md). SQLite refuses it: a file cannot be shared by
	// instances on different machines. Read at start.
	Shared bool
}

// Routing is the `routing:` section.
type Routing struct {
	Cooldown    Cooldown
	Timeouts    Timeouts
	MaxAttempts int
	HealthScore HealthScore
	Unpriced    string // UnpricedRefuse | UnpricedAllow
	Affinity    Affinity
}

// Affinity keeps a client session on the route (channel, key, URL) that
// served its last successful request, so the provider's prompt cache,
// which lives with one account, keeps hitting (engine/affinity).
type Affinity struct {
	Enabled     bool
	TTL         Duration // a session unused this long is forgotten
	MaxSessions int      // bound of the pin table (least recently used go first)
	// MaxShare caps the share of pinned sessions one channel may hold
	// among channels of equal priority; a session over the cap is let go
	// and routed afresh, so an outage cannot leave a hot spot behind.
	MaxShare float64
}

// Cooldown holds the initial cooldown per failure kind and the bounds.
type Cooldown struct {
	Auth, RateLimit, Server, Timeout Duration
	Min, Max                         Duration
	Fallback                         bool
}

// Timeouts bounds one upstream attempt, and Request the failover of one
// client request. Zero means no limit.
type Timeouts struct {
	FirstByte Duration // until the first content event (stream) or headers (non-stream)
	NonStream Duration // whole non-stream response
	Stream    Duration // whole stream
	// Request is the client request's deadline for its answer to start,
	// counted from its arrival: no attempt starts after it, and a running
	// attempt's wait for its first byte ends at it. Once the answer has
	// started only the attempt's own timeouts apply, so a long stream is
	// never cut by it.
	Request Duration
}

// HealthScore configures the priority penalty for failing channels.
type HealthScore struct {
	Enabled    bool
	Window     Duration
	MinSamples int
	Penalty    float64
}

// Channel is one upstream: URLs, keys and the models it serves.
type Channel struct {
	Name           string
	Priority       int
	Weight         int // >= 1
	URLs           []URL
	Keys           []Secret
	KeyStrategy    string // round_robin | sequential
	Models         []Model
	RPMLimit       int
	MaxConcurrency int
	DailyCostLimit float64
	ActiveHours    *Hours // nil = always
	Proxy          string
	CostMultiplier float64
	Rewrite        Rewrite
	Check          *Check // nil = no scheduled check
	Enabled        bool

	// WebSearch lets a conversion offer a client's hosted web search tool
	// as the upstream's own (Anthropic web search, Gemini googleSearch,
	// Responses web_search). Off (the default) the tool is left out with
	// a note: the upstream's search is billed and answers differently.
	WebSearch bool
	// WebSockets makes a WebSocket turn try this channel's Responses URLs
	// over a native upstream WebSocket (http->ws, https->wss) before the
	// HTTP/SSE path.
	WebSockets bool
	// Affinity: false opts this channel out of session affinity.
	Affinity bool
	// Debug captures the upstream requests and responses of every request
	// this channel serves, stored with the log row.
	Debug bool

	// OAuth names the subscription provider whose signed-in accounts are
	// this channel's credentials (OAuthCodex, OAuthXAI), "" for keys.
	// Keys then holds one AccountKey placeholder per account, in order.
	OAuth         string
	Accounts      []string
	OAuthIssuer   string // the provider's sign-in server, no trailing slash
	OAuthClientID string
	// Credentials is CredentialsClient when the channel forwards the
	// client's own Anthropic credential (a Claude subscription sign-in)
	// instead of using keys; Keys then holds ClientKey.
	Credentials string
}

// URL is one base URL of a channel.
type URL struct {
	URL       string
	Protocols []protocol.Family // empty = detect (client protocol first)
	Exact     bool              // URL is the complete endpoint, no path appended
}

// Model is one model a channel serves.
type Model struct {
	Name     string // what clients ask for
	Upstream string // what is sent upstream; equals Name when not renamed
	Disabled bool
}

// Rewrite rules apply after conversion, before sending upstream.
type Rewrite struct {
	Headers []HeaderRule
	Body    []BodyRule
}

// HeaderRule changes one upstream request header.
type HeaderRule struct {
	Action string // override | remove
	Name   string
	Value  string
}

// BodyRule changes one path (sjson syntax) of the upstream request body.
type BodyRule struct {
	Action string          // override | remove
	Path   string          // sjson path
	Value  json.RawMessage // the YAML value encoded as JSON (override only)
}

// Check schedules a background probe of a channel.
type Check struct {
	Model string
	Every Duration
}

// Hours is a daily window in local time; Start > End crosses midnight.
type Hours struct {
	Start, End int // minutes since midnight
}

// Token is one client credential and its limits.
type Token struct {
	Name           string
	SHA256         string   // lowercase hex sha256 of the token
	Models         []string // globs (path.Match); empty = all
	Channels       ChannelRule
	CostLimit      float64 // USD, lifetime; 0 = none
	MaxConcurrency int
	RPMLimit       int
	Expires        time.Time // zero = never
	// Debug captures the upstream traffic of every request of this token,
	// stored with the log row.
	Debug bool
}

// ChannelRule restricts the channels a token may use: Allow or Deny, not both.
type ChannelRule struct {
	Allow []string
	Deny  []string
}

// Price is USD per million tokens.
type Price struct {
	Input, Output, CacheRead, CacheWrite float64
}
