package adminapi

import (
	"encoding/json"
	"time"
)

// The types below are the admin API's JSON bodies, shared by the server and
// Client. They are documented field by field in admin/API.md; the API is stable
// and additive: fields may be added, existing ones keep their name, type and
// meaning. Every secret appears only as a fingerprint ("sk-a…f3c9").

// ErrorBody is the body of every error response.
type ErrorBody struct {
	Error string `json:"error"`
}

// LoginRequest is the body of POST /admin/login.
type LoginRequest struct {
	Password string `json:"password"`
}

// LoginResponse answers a successful login.
type LoginResponse struct {
	OK        bool      `json:"ok"`
	ExpiresAt time.Time `json:"expires_at"`
}

// Status is GET /admin/status.
type Status struct {
	Time          time.Time     `json:"time"`
	StartedAt     time.Time     `json:"started_at"`
	UptimeSeconds int64         `json:"uptime_seconds"`
	Config        ConfigStatus  `json:"config"`
	Storage       StorageStatus `json:"storage"`
	InFlight      int64         `json:"in_flight"`
	EventsDropped int64         `json:"events_dropped"`
	// PriceCatalog is null when price_catalog.url is not set.
	PriceCatalog *PriceCatalogStatus `json:"price_catalog"`
	// WebSockets is null when the engine does not serve the transport.
	WebSockets *WebSocketStatus `json:"websockets"`
	// Instance is the id of the instance that answered; Instances lists
	// every live one on the database (InstancesError says why the list is
	// the last known one).
	Instance       string     `json:"instance"`
	Instances      []Instance `json:"instances"`
	InstancesError string     `json:"instances_error"`
}

// Instance is one live `ccload serve` process on the database:
// it wrote a heartbeat within the last 30 s. InFlight is its own count at
// that heartbeat; active requests and /admin/events stay per instance.
type Instance struct {
	ID            string    `json:"id"`
	Hostname      string    `json:"hostname"`
	Address       string    `json:"address"`
	Version       string    `json:"version"`
	StartedAt     time.Time `json:"started_at"`
	LastHeartbeat time.Time `json:"last_heartbeat"`
	InFlight      int64     `json:"in_flight"`
	Self          bool      `json:"self"` // the instance that answered
}

// PriceCatalogStatus is the price catalog's current copy and last fetch.
type PriceCatalogStatus struct {
	URL         string     `json:"url"`        // masked like channel URLs
	Source      string     `json:"source"`     // "fetched", "database" (the last good copy) or "" (none: the embedded table prices)
	FetchedAt   *time.Time `json:"fetched_at"` // when the current copy was fetched; null when none
	Models      int        `json:"models"`     // model names the current copy prices
	LastAttempt *time.Time `json:"last_attempt"`
	Error       string     `json:"error"` // why the last fetch failed, "" when it succeeded
}

// ConfigStatus is the serving config and the last reload attempt.
type ConfigStatus struct {
	File        string    `json:"file"`
	SHA256      string    `json:"sha256"`
	LoadedAt    time.Time `json:"loaded_at"`
	LastAttempt time.Time `json:"last_attempt"`
	Error       string    `json:"error"` // "" when the last attempt succeeded
	Reloads     int       `json:"reloads"`
	Failures    int       `json:"failures"`
	Channels    int       `json:"channels"`
	Tokens      int       `json:"tokens"`
}

// StorageStatus is the database driver and the log writer's counters.
type StorageStatus struct {
	Driver      string `json:"driver"`
	Queued      int64  `json:"queued"`
	Written     int64  `json:"written"`
	Dropped     int64  `json:"dropped"`
	Rejected    int64  `json:"rejected"`
	Unwritten   int64  `json:"unwritten"`
	WriteErrors int64  `json:"write_errors"`
	LastError   string `json:"last_error"`
}

// ConfigResponse is GET /admin/config.
type ConfigResponse struct {
	Status  ConfigStatus   `json:"status"`
	Config  ConfigView     `json:"config"`
	History []ReloadRecord `json:"history"`
}

// ReloadRecord is one entry of the in-memory reload history, newest first.
type ReloadRecord struct {
	Time   time.Time `json:"time"`
	Result string    `json:"result"` // "loaded" (start), "reloaded" or "failed"
	SHA256 string    `json:"sha256,omitempty"`
	Error  string    `json:"error,omitempty"`
	// Count is how many failed attempts the entry stands for (failures are
	// noticed when the status is read, so several may fold into one).
	Count int `json:"count,omitempty"`
}

// ConfigView is the loaded config with secrets masked. Its keys are those
// of the YAML file.
type ConfigView struct {
	Version  int                  `json:"version" yaml:"version"`
	Server   ServerView           `json:"server" yaml:"server"`
	Storage  StorageView          `json:"storage" yaml:"storage"`
	Routing  RoutingView          `json:"routing" yaml:"routing"`
	Channels []ChannelConfig      `json:"channels" yaml:"channels"`
	Tokens   []TokenConfig        `json:"tokens" yaml:"tokens"`
	Pricing  map[string]PriceView `json:"pricing" yaml:"pricing"`
}

// ServerView is `server:`.
type ServerView struct {
	Listen        string `json:"listen" yaml:"listen"`
	AdminPassword string `json:"admin_password" yaml:"admin_password"` // "(set)" or "(not set)", never a fingerprint
	MaxBodyBytes  string `json:"max_body_bytes" yaml:"max_body_bytes"`
}

// StorageView is `storage:`.
type StorageView struct {
	Driver       string `json:"driver" yaml:"driver"`
	DSN          string `json:"dsn" yaml:"dsn"` // fingerprint
	LogRetention string `json:"log_retention" yaml:"log_retention"`
	LogQueue     int    `json:"log_queue" yaml:"log_queue"`
	Shared       bool   `json:"shared" yaml:"shared"`
}

// RoutingView is `routing:`.
type RoutingView struct {
	Cooldown    map[string]string `json:"cooldown" yaml:"cooldown"` // durations; "fallback": "true"|"false"
	Timeouts    map[string]string `json:"timeouts" yaml:"timeouts"`
	MaxAttempts int               `json:"max_attempts" yaml:"max_attempts"`
	HealthScore HealthScoreView   `json:"health_score" yaml:"health_score"`
}

// HealthScoreView is `routing.health_score`.
type HealthScoreView struct {
	Enabled    bool    `json:"enabled" yaml:"enabled"`
	Window     string  `json:"window" yaml:"window"`
	MinSamples int     `json:"min_samples" yaml:"min_samples"`
	Penalty    float64 `json:"penalty" yaml:"penalty"`
}

// PriceView is one `pricing:` entry, USD per million tokens.
type PriceView struct {
	Input      float64 `json:"input" yaml:"input"`
	Output     float64 `json:"output" yaml:"output"`
	CacheRead  float64 `json:"cache_read" yaml:"cache_read"`
	CacheWrite float64 `json:"cache_write" yaml:"cache_write"`
}

// ChannelConfig is one channel as configured.
type ChannelConfig struct {
	Name        string      `json:"name" yaml:"name"`
	Enabled     bool        `json:"enabled" yaml:"enabled"`
	Priority    int         `json:"priority" yaml:"priority"`
	Weight      int         `json:"weight" yaml:"weight"`
	URLs        []URLView   `json:"urls" yaml:"urls"`
	Keys        []string    `json:"keys" yaml:"keys"` // key ids: fingerprint + "#" + 8 hex of its sha256
	KeyStrategy string      `json:"key_strategy" yaml:"key_strategy"`
	Models      []ModelView `json:"models" yaml:"models"`
	Limits      Limits      `json:"limits" yaml:"limits"`
	Proxy       string      `json:"proxy,omitempty" yaml:"proxy,omitempty"` // password masked
	// Rewrite header values are fingerprints (they may carry credentials);
	// body rule values are shown.
	Rewrite *RewriteView `json:"rewrite,omitempty" yaml:"rewrite,omitempty"`
	Check   *CheckView   `json:"check,omitempty" yaml:"check,omitempty"`
}

// URLView is one channel URL; EWMAms, Visited and Detected are live (in
// /admin/channels only).
type URLView struct {
	URL       string   `json:"url" yaml:"url"` // userinfo password and query values masked
	Protocols []string `json:"protocols" yaml:"protocols"`
	Exact     bool     `json:"exact" yaml:"exact"`
	EWMAms    float64  `json:"ewma_ms" yaml:"-"`
	Visited   bool     `json:"visited" yaml:"-"`
	// Detected is what protocol detection learned about a URL that
	// declares no protocols, per client family (absent until a request
	// probed it; cleared when the config changes).
	Detected []DetectionView `json:"detected,omitempty" yaml:"-"`
}

// DetectionView is one protocol detection result: the family the URL
// answered for requests of the Client family, or, when Protocol is empty,
// that it answered no family and is probed again at RetryAt.
type DetectionView struct {
	Client   string     `json:"client"`
	Protocol string     `json:"protocol"`
	RetryAt  *time.Time `json:"retry_at,omitempty"`
}

// ModelView is one model a channel serves.
type ModelView struct {
	Name     string `json:"name" yaml:"name"`
	Upstream string `json:"upstream" yaml:"upstream"` // equals Name when not renamed
	Disabled bool   `json:"disabled" yaml:"disabled"`
}

// Limits are a channel's caps; 0 means none.
type Limits struct {
	RPMLimit       int     `json:"rpm_limit" yaml:"rpm_limit"`
	MaxConcurrency int     `json:"max_concurrency" yaml:"max_concurrency"`
	DailyCostLimit float64 `json:"daily_cost_limit" yaml:"daily_cost_limit"`
	ActiveHours    string  `json:"active_hours" yaml:"active_hours"` // "" = always
	CostMultiplier float64 `json:"cost_multiplier" yaml:"cost_multiplier"`
}

// RewriteView is a channel's rewrite rules.
type RewriteView struct {
	Headers []RuleView `json:"headers" yaml:"headers"`
	Body    []RuleView `json:"body" yaml:"body"`
}

// RuleView is one rewrite rule. Name is set for header rules, Path for body
// rules.
type RuleView struct {
	Action string          `json:"action" yaml:"action"`
	Name   string          `json:"name,omitempty" yaml:"name,omitempty"`
	Path   string          `json:"path,omitempty" yaml:"path,omitempty"`
	Value  json.RawMessage `json:"value,omitempty" yaml:"-"`
}

// CheckView is a channel's scheduled probe.
type CheckView struct {
	Model string `json:"model" yaml:"model"`
	Every string `json:"every" yaml:"every"`
}

// TokenConfig is one client token as configured.
type TokenConfig struct {
	Name           string      `json:"name" yaml:"name"`
	Fingerprint    string      `json:"fingerprint" yaml:"fingerprint"` // of its sha256, never the token
	Models         []string    `json:"models" yaml:"models"`           // globs; empty = all
	Channels       ChannelRule `json:"channels" yaml:"channels"`
	CostLimit      float64     `json:"cost_limit" yaml:"cost_limit"`
	MaxConcurrency int         `json:"max_concurrency" yaml:"max_concurrency"`
	RPMLimit       int         `json:"rpm_limit" yaml:"rpm_limit"`
	Expires        *time.Time  `json:"expires" yaml:"expires"` // null = never
}

// ChannelRule is a token's allow or deny list of channels.
type ChannelRule struct {
	Allow []string `json:"allow" yaml:"allow"`
	Deny  []string `json:"deny" yaml:"deny"`
}

// ChannelsResponse is GET /admin/channels.
type ChannelsResponse struct {
	Time     time.Time `json:"time"`
	Channels []Channel `json:"channels"`
	// Instances are the live instances, as in Status; channel in-flight
	// counts and RPM are those of the instance that answered.
	Instances []Instance `json:"instances"`
}

// Channel is one channel's configuration and live state.
type Channel struct {
	ChannelConfig
	// State sums the live state up: "disabled" (enabled: false in the
	// file), "paused" (runtime override), "cooling" (the whole channel
	// cools), "degraded" (some key, model or URL cools) or "ok".
	State     string     `json:"state"`
	Paused    bool       `json:"paused"`
	PausedAt  *time.Time `json:"paused_at"` // when the pause override was stored; null when not paused
	InFlight  int64      `json:"in_flight"`
	RPM       int        `json:"rpm"`
	Cooldowns []Cooldown `json:"cooldowns"`
	Today     Usage      `json:"today"`
	// LastCheck is the latest scheduled check (`check:` in the file), null
	// when the channel has none or it has not run yet. key is a fingerprint,
	// url is masked.
	LastCheck *ProbeResult `json:"last_check"`
	// Unpriced lists the enabled models that have no price: their requests
	// are logged as unpriced with cost 0, or refused under a cost limit
	// (routing.unpriced). [] when every model is priced.
	Unpriced []string `json:"unpriced"`
}

// Cooldown is one cooling component.
type Cooldown struct {
	Scope       string    `json:"scope"` // key | model | url | channel
	Channel     string    `json:"channel"`
	Key         string    `json:"key,omitempty"` // key id, as in ChannelConfig.Keys (scope key)
	Model       string    `json:"model,omitempty"`
	URL         string    `json:"url,omitempty"` // masked like URLView.URL
	Until       time.Time `json:"until"`
	SecondsLeft int64     `json:"seconds_left"`
	Strikes     int       `json:"strikes"`
	Kind        string    `json:"kind"`
	Reason      string    `json:"reason"`
}

// Usage is what a channel or token did on one UTC day (from usage_daily).
type Usage struct {
	Requests     int64   `json:"requests"`
	Errors       int64   `json:"errors"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	Cost         float64 `json:"cost"`
	Cache
}

// CooldownsResponse is GET /admin/cooldowns.
type CooldownsResponse struct {
	Time      time.Time  `json:"time"`
	Cooldowns []Cooldown `json:"cooldowns"`
}

// ClearRequest is the body of POST /admin/cooldowns/clear. Every field set
// must match; Channel is required unless All is true.
type ClearRequest struct {
	Scope   string `json:"scope,omitempty"`
	Channel string `json:"channel,omitempty"`
	Key     string `json:"key,omitempty"` // key id; its fingerprint part alone matches every key sharing it
	Model   string `json:"model,omitempty"`
	URL     string `json:"url,omitempty"` // as shown, masked or not
	All     bool   `json:"all,omitempty"`
}

// ClearResponse lists the cooldowns a clear removed.
type ClearResponse struct {
	Cleared []Cooldown `json:"cleared"`
}

// TokensResponse is GET /admin/tokens.
type TokensResponse struct {
	Time   time.Time `json:"time"`
	Tokens []Token   `json:"tokens"`
}

// Token is one client token's limits and usage.
type Token struct {
	TokenConfig
	Expired  bool    `json:"expired"`
	CostUsed float64 `json:"cost_used"` // lifetime, USD
	InFlight int64   `json:"in_flight"`
	RPM      int     `json:"rpm"`
	Today    Usage   `json:"today"`
}

// LogsResponse is GET /admin/logs.
type LogsResponse struct {
	Rows []LogEntry `json:"rows"`
	// NextBefore is the cursor of the next (older) page: pass it as
	// before=. 0 when this page is the last.
	NextBefore int64 `json:"next_before"`
}

// LogEntry is one request log row.
type LogEntry struct {
	ID               int64        `json:"id"`
	Time             time.Time    `json:"time"`
	RequestID        string       `json:"request_id"`
	Token            string       `json:"token"`
	Channel          string       `json:"channel"`
	Key              string       `json:"key"` // key id
	URL              string       `json:"url"` // masked
	ClientProtocol   string       `json:"client_protocol"`
	UpstreamProtocol string       `json:"upstream_protocol"`
	Model            string       `json:"model"`
	UpstreamModel    string       `json:"upstream_model"`
	Status           int          `json:"status"`
	FailureKind      string       `json:"failure_kind"`
	FailureScope     string       `json:"failure_scope"`
	Attempts         int          `json:"attempts"`
	AttemptLog       []AttemptLog `json:"attempt_log"`
	TTFBMs           int64        `json:"ttfb_ms"`
	DurationMs       int64        `json:"duration_ms"`
	InputTokens      int64        `json:"input_tokens"`
	OutputTokens     int64        `json:"output_tokens"`
	CacheReadTokens  int64        `json:"cache_read_tokens"`
	CacheWriteTokens int64        `json:"cache_write_tokens"`
	ReasoningTokens  int64        `json:"reasoning_tokens"`
	Cost             float64      `json:"cost"`
	Stream           bool         `json:"stream"`
	Incomplete       bool         `json:"incomplete"`
	Unpriced         bool         `json:"unpriced"` // cost 0 because the model has no price, not because it was free
	ClientIP         string       `json:"client_ip"`
	Error            string       `json:"error"`
}

// LogDetail is GET /admin/logs/{id}: one row in full, with its debug
// capture.
type LogDetail struct {
	LogEntry
	// Debug is the upstream traffic captured for a channel or token with
	// debug: true; null when the request was not captured.
	Debug *Debug `json:"debug"`
}

// Debug is a request's debug capture: one exchange per upstream
// attempt that was sent. Credentials are masked (fingerprints such as
// "Bearer sk-a…f3c9"), bodies cut at MaxBytes (server.debug_max_bytes).
type Debug struct {
	MaxBytes  int             `json:"max_bytes"`
	Exchanges []DebugExchange `json:"exchanges"`
}

// DebugExchange is one attempt's upstream request and response. Attempt
// is the 1-based index into the row's attempt_log. Response is null when
// no answer arrived (connection refused, timeout before headers).
type DebugExchange struct {
	Attempt  int            `json:"attempt"`
	Request  DebugRequest   `json:"request"`
	Response *DebugResponse `json:"response"`
}

// DebugRequest is what ccload sent upstream.
type DebugRequest struct {
	Method string        `json:"method"`
	URL    string        `json:"url"` // masked
	Header []DebugHeader `json:"header"`
	DebugBody
}

// DebugResponse is what the upstream answered.
type DebugResponse struct {
	Status int           `json:"status"`
	Header []DebugHeader `json:"header"`
	DebugBody
}

// DebugHeader is one header line, credential values masked.
type DebugHeader struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// DebugBody is a captured body: text, or base64 when it is not UTF-8
// (audio, images). Size counts every byte of the body (as far as it was
// read); Truncated says Body holds only the first MaxBytes.
type DebugBody struct {
	Body      string `json:"body"`
	Base64    bool   `json:"base64,omitempty"`
	Size      int64  `json:"size"`
	Truncated bool   `json:"truncated,omitempty"`
}

// AttemptLog is one upstream attempt inside a request.
type AttemptLog struct {
	Channel       string `json:"channel"`
	Key           string `json:"key"` // key id
	URL           string `json:"url"` // masked
	Protocol      string `json:"protocol"`
	UpstreamModel string `json:"upstream_model"`
	Status        int    `json:"status"`
	Kind          string `json:"kind,omitempty"`
	Scope         string `json:"scope,omitempty"`
	DurationMs    int64  `json:"duration_ms"`
	Error         string `json:"error,omitempty"`

	// Notes say what the request conversion for this upstream dropped or
	// approximated (e.g. "parallel_tool_calls: false dropped: gemini
	// upstreams cannot forbid parallel calls"); absent when none.
	Notes []string `json:"notes,omitempty"`
}

// StatsResponse is GET /admin/stats.
type StatsResponse struct {
	Since         time.Time `json:"since"`
	Until         time.Time `json:"until"`
	BucketSeconds int64     `json:"bucket_seconds"`
	Buckets       []Bucket  `json:"buckets"`
	Total         Bucket    `json:"total"`
	Top           Top       `json:"top"`
}

// Bucket sums the requests that started in [Start, Start+bucket).
type Bucket struct {
	Start        time.Time `json:"start"`
	Requests     int64     `json:"requests"`
	Errors       int64     `json:"errors"`
	InputTokens  int64     `json:"input_tokens"`
	OutputTokens int64     `json:"output_tokens"`
	Cost         float64   `json:"cost"`
	Cache
	// TTFB percentiles over the requests that got a first byte; 0 when none.
	TTFBp50ms int64 `json:"ttfb_p50_ms"`
	TTFBp95ms int64 `json:"ttfb_p95_ms"`
}

// Top ranks models, channels and tokens by cost, then requests.
type Top struct {
	Models   []Rank `json:"models"`
	Channels []Rank `json:"channels"`
	Tokens   []Rank `json:"tokens"`
}

// Rank is one entry of a ranking.
type Rank struct {
	Name         string  `json:"name"`
	Requests     int64   `json:"requests"`
	Errors       int64   `json:"errors"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	Cost         float64 `json:"cost"`
	Cache
}

// ActiveResponse is GET /admin/active.
type ActiveResponse struct {
	Time   time.Time `json:"time"`
	Active []Event   `json:"active"`
}

// Cache is the prompt cache part of a usage, bucket or rank (embedded, so
// its fields sit beside the others in JSON): tokens read from the
// provider's cache, their share of all input tokens (CacheHitRate, 0-1),
// and what they saved against the full input price (CacheSaved, USD, at
// the price table's rates).
type Cache struct {
	CacheReadTokens int64   `json:"cache_read_tokens"`
	CacheHitRate    float64 `json:"cache_hit_rate"`
	CacheSaved      float64 `json:"cache_saved"`
}

// SetHitRate fills CacheHitRate once the tokens are summed.
func (c *Cache) SetHitRate(input int64) { c.CacheHitRate = HitRate(c.CacheReadTokens, input) }

// HitRate is cache-read tokens over input tokens (input counts every prompt
// token, cached or not), 0 when there was no input.
func HitRate(cacheRead, input int64) float64 {
	if input <= 0 {
		return 0
	}
	return min(float64(cacheRead)/float64(input), 1)
}
