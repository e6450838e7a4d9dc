package config

import (
	"net"
	"strconv"

	"gopkg.in/yaml.v3"
)

// Field constructors for the common shapes. Each reads one scalar and, when
// it is valid, stores it through get; a bad value is reported and the
// default stays.

func strField[T any](key string, get func(*T) *string) field[T] {
	return field[T]{key, func(d *decoder, n *yaml.Node, p string, v *T) {
		if s, ok := d.str(n, p); ok {
			*get(v) = s
		}
	}}
}

// nameField reads a string that must not be empty. An absent key is left
// to the caller ("name is required"); an empty one is reported here, so a
// value that failed for another reason is not reported twice.
func nameField[T any](key string, get func(*T) *string) field[T] {
	return field[T]{key, func(d *decoder, n *yaml.Node, p string, v *T) {
		if s, ok := d.str(n, p); ok && s == "" {
			d.addf(n, p, "is empty")
		} else if ok {
			*get(v) = s
		}
	}}
}

func secretField[T any](key string, get func(*T) *Secret) field[T] {
	return field[T]{key, func(d *decoder, n *yaml.Node, p string, v *T) {
		if s, ok := d.str(n, p); ok {
			*get(v) = Secret(s)
		}
	}}
}

// intField reads an integer that must be at least lo.
func intField[T any](key string, lo int, get func(*T) *int) field[T] {
	return field[T]{key, func(d *decoder, n *yaml.Node, p string, v *T) {
		i, ok := d.integer(n, p)
		switch {
		case !ok:
		case i < lo && lo == 0:
			d.addf(n, p, "must not be negative, got %d", i)
		case i < lo:
			d.addf(n, p, "must be at least %d, got %d", lo, i)
		default:
			*get(v) = i
		}
	}}
}

// numField reads a number that must not be negative.
func numField[T any](key string, get func(*T) *float64) field[T] {
	return field[T]{key, func(d *decoder, n *yaml.Node, p string, v *T) {
		f, ok := d.number(n, p)
		switch {
		case !ok:
		case f < 0:
			d.addf(n, p, "must not be negative, got %s", strconv.FormatFloat(f, 'g', -1, 64))
		default:
			*get(v) = f
		}
	}}
}

func boolField[T any](key string, get func(*T) *bool) field[T] {
	return field[T]{key, func(d *decoder, n *yaml.Node, p string, v *T) {
		if b, ok := d.boolean(n, p); ok {
			*get(v) = b
		}
	}}
}

func durField[T any](key string, get func(*T) *Duration) field[T] {
	return field[T]{key, func(d *decoder, n *yaml.Node, p string, v *T) {
		if x, ok := d.duration(n, p); ok {
			*get(v) = x
		}
	}}
}

// section decodes a nested mapping into the sub-struct get returns.
func section[T, S any](key string, fs fields[S], get func(*T) *S) field[T] {
	return field[T]{key, func(d *decoder, n *yaml.Node, p string, v *T) {
		fs.decode(d, n, p, get(v))
	}}
}

// rootFields is the top level of the file.
var rootFields = fields[Snapshot]{
	{"version", func(d *decoder, n *yaml.Node, p string, s *Snapshot) {
		v, ok := d.integer(n, p)
		if ok && v != 1 {
			d.addf(n, p, "unsupported version %d (this ccload reads version 1)", v)
		}
		if ok {
			s.Version = v
		}
	}},
	section("server", serverFields, func(s *Snapshot) *Server { return &s.Server }),
	{"storage", decodeStorage},
	{"routing", decodeRouting},
	{"channels", decodeChannels},
	{"tokens", decodeTokens},
	{"pricing", decodePricing},
	section("price_catalog", priceCatalogFields, func(s *Snapshot) *PriceCatalog { return &s.PriceCatalog }),
}

var serverFields = fields[Server]{
	{"listen", func(d *decoder, n *yaml.Node, p string, s *Server) {
		if v, ok := d.str(n, p); ok && validListen(v) {
			s.Listen = v
		} else if ok {
			d.addf(n, p, `want host:port like "127.0.0.1:8080" or ":8080", got %q`, v)
		}
	}},
	secretField("admin_password", func(s *Server) *Secret { return &s.AdminPassword }),
	secretField("metrics_token", func(s *Server) *Secret { return &s.MetricsToken }),
	{"secret_key", decodeSecretKey},
	{"max_body_bytes", func(d *decoder, n *yaml.Node, p string, s *Server) {
		if z, ok := d.size(n, p); ok && z == 0 {
			d.addf(n, p, "must be greater than 0")
		} else if ok {
			s.MaxBodyBytes = z
		}
	}},
	boolField("pprof", func(s *Server) *bool { return &s.Pprof }),
	durField("header_timeout", func(s *Server) *Duration { return &s.Limits.HeaderTimeout }),
	durField("body_timeout", func(s *Server) *Duration { return &s.Limits.BodyTimeout }),
	durField("stream_write_timeout", func(s *Server) *Duration { return &s.Limits.StreamWriteTimeout }),
	intField("max_conns", 1, func(s *Server) *int { return &s.Limits.MaxConns }),
	intField("max_conns_per_ip", 0, func(s *Server) *int { return &s.Limits.MaxConnsPerIP }),
	{"trusted_proxies", decodeTrustedProxies},
	section("websockets", webSocketsFields, func(s *Server) *WebSockets { return &s.WebSockets }),
	{"debug_max_bytes", func(d *decoder, n *yaml.Node, p string, s *Server) {
		switch z, ok := d.size(n, p); {
		case ok && z == 0:
			d.addf(n, p, "must be greater than 0")
		case ok && z > MaxDebugBytes:
			d.addf(n, p, "must be at most %s (each attempt keeps two bodies of this size with the log row)", MaxDebugBytes)
		case ok:
			s.DebugMaxBytes = z
		}
	}},
}

// MaxDebugBytes bounds server.debug_max_bytes: a capture is held in memory
// until its row is written, and stored in one database row.
const MaxDebugBytes Size = 4 << 20

func validListen(v string) bool {
	_, port, err := net.SplitHostPort(v)
	if err != nil {
		return false
	}
	_, err = strconv.ParseUint(port, 10, 16)
	return err == nil
}

var storageFields = fields[Storage]{
	{"driver", func(d *decoder, n *yaml.Node, p string, s *Storage) {
		switch v, ok := d.str(n, p); {
		case !ok:
		case v == DriverSQLite || v == DriverMySQL || v == DriverPostgres:
			s.Driver = v
		default:
			d.addf(n, p, "unknown driver %q (want sqlite, mysql or postgres)", v)
		}
	}},
	secretField("dsn", func(s *Storage) *Secret { return &s.DSN }),
	durField("log_retention", func(s *Storage) *Duration { return &s.LogRetention }),
	intField("log_queue", 1, func(s *Storage) *int { return &s.LogQueue }),
	boolField("shared", func(s *Storage) *bool { return &s.Shared }),
}

// decodeStorage adds the one cross-field rule: the default DSN is a SQLite
// path, so another driver needs its own.
func decodeStorage(d *decoder, n *yaml.Node, p string, s *Snapshot) {
	seen := storageFields.decode(d, n, p, &s.Storage)
	if s.Storage.Driver != DriverSQLite && isNull(d.resolve(seen["dsn"])) {
		d.addf(n, p, "dsn is required with driver %s", s.Storage.Driver)
	}
	if s.Storage.DSN == "" && seen["dsn"] != nil && !isNull(d.resolve(seen["dsn"])) {
		d.addf(seen["dsn"], join(p, "dsn"), "is empty")
	}
	if s.Storage.Shared && s.Storage.Driver == DriverSQLite {
		d.addf(seen["shared"], join(p, "shared"),
			"needs driver postgres or mysql: a SQLite file cannot be shared by several instances")
	}
}

var routingFields = fields[Routing]{
	section("cooldown", cooldownFields, func(r *Routing) *Cooldown { return &r.Cooldown }),
	section("timeouts", timeoutFields, func(r *Routing) *Timeouts { return &r.Timeouts }),
	intField("max_attempts", 1, func(r *Routing) *int { return &r.MaxAttempts }),
	section("health_score", healthFields, func(r *Routing) *HealthScore { return &r.HealthScore }),
	unpricedField,
	section("affinity", affinityFields, func(r *Routing) *Affinity { return &r.Affinity }),
}

var affinityFields = fields[Affinity]{
	boolField("enabled", func(a *Affinity) *bool { return &a.Enabled }),
	durField("ttl", func(a *Affinity) *Duration { return &a.TTL }),
	intField("max_sessions", 1, func(a *Affinity) *int { return &a.MaxSessions }),
	numField("max_share", func(a *Affinity) *float64 { return &a.MaxShare }),
}

var cooldownFields = fields[Cooldown]{
	durField("auth", func(c *Cooldown) *Duration { return &c.Auth }),
	durField("rate_limit", func(c *Cooldown) *Duration { return &c.RateLimit }),
	durField("server", func(c *Cooldown) *Duration { return &c.Server }),
	durField("timeout", func(c *Cooldown) *Duration { return &c.Timeout }),
	durField("min", func(c *Cooldown) *Duration { return &c.Min }),
	durField("max", func(c *Cooldown) *Duration { return &c.Max }),
	boolField("fallback", func(c *Cooldown) *bool { return &c.Fallback }),
}

var timeoutFields = fields[Timeouts]{
	durField("first_byte", func(t *Timeouts) *Duration { return &t.FirstByte }),
	durField("non_stream", func(t *Timeouts) *Duration { return &t.NonStream }),
	durField("stream", func(t *Timeouts) *Duration { return &t.Stream }),
	durField("request", func(t *Timeouts) *Duration { return &t.Request }),
}

var healthFields = fields[HealthScore]{
	boolField("enabled", func(h *HealthScore) *bool { return &h.Enabled }),
	durField("window", func(h *HealthScore) *Duration { return &h.Window }),
	intField("min_samples", 0, func(h *HealthScore) *int { return &h.MinSamples }),
	numField("penalty", func(h *HealthScore) *float64 { return &h.Penalty }),
}

func decodeRouting(d *decoder, n *yaml.Node, p string, s *Snapshot) {
	seen := routingFields.decode(d, n, p, &s.Routing)
	if c := s.Routing.Cooldown; c.Min > c.Max {
		d.addf(d.orNode(seen["cooldown"], n), join(p, "cooldown"), "min (%v) is greater than max (%v)", c.Min, c.Max)
	}
	if h := s.Routing.HealthScore; h.Enabled && h.Window == 0 {
		d.addf(d.orNode(seen["health_score"], n), join(p, "health_score"), "window must be greater than 0 when enabled")
	}
	if a := s.Routing.Affinity; a.MaxShare <= 0 || a.MaxShare > 1 {
		d.addf(d.orNode(seen["affinity"], n), join(p, "affinity"), "max_share must be greater than 0 and at most 1, got %g", a.MaxShare)
	} else if a.Enabled && a.TTL == 0 {
		d.addf(d.orNode(seen["affinity"], n), join(p, "affinity"), "ttl must be greater than 0 when enabled")
	}
}

// orNode returns n, or fallback when n is absent, for positions.
func (d *decoder) orNode(n, fallback *yaml.Node) *yaml.Node {
	if n = d.resolve(n); n != nil {
		return n
	}
	return fallback
}

var priceFields = fields[Price]{
	numField("input", func(p *Price) *float64 { return &p.Input }),
	numField("output", func(p *Price) *float64 { return &p.Output }),
	numField("cache_read", func(p *Price) *float64 { return &p.CacheRead }),
	numField("cache_write", func(p *Price) *float64 { return &p.CacheWrite }),
}

// decodePricing reads `pricing:`, a mapping from model name to price. The
// model names are keys, so they are taken literally (no expansion).
func decodePricing(d *decoder, n *yaml.Node, p string, s *Snapshot) {
	n = d.resolve(n)
	if isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		d.addf(n, p, "want mapping of model name to price, got %s", describe(n))
		return
	}
	for _, kv := range d.pairs(n, p) {
		name := kv.key.Value
		mp := join(p, name)
		if name == "" {
			d.addf(kv.key, p, "empty model name")
			continue
		}
		if v := d.resolve(kv.val); v == nil || v.Kind != yaml.MappingNode {
			if v != nil {
				d.addf(v, mp, "want mapping like {input: 3, output: 15}, got %s", describe(v))
			}
			continue
		}
		var price Price
		priceFields.decode(d, kv.val, mp, &price)
		if s.Pricing == nil {
			s.Pricing = map[string]Price{}
		}
		s.Pricing[name] = price
	}
}

// KnownKeys returns, for every mapping of the file, the keys the decoder
// accepts, in the decoder's own order. The map key names the mapping: "" is
// the top level, "server" a section, "channels[]" an entry of a list,
// "pricing.*" the value under any key. The schema test checks that
// schema/ccload.schema.json describes exactly these.
func KnownKeys() map[string][]string {
	return map[string][]string{
		"":                             rootFields.keys(),
		"server":                       serverFields.keys(),
		"server.websockets":            webSocketsFields.keys(),
		"storage":                      storageFields.keys(),
		"routing":                      routingFields.keys(),
		"routing.cooldown":             cooldownFields.keys(),
		"routing.timeouts":             timeoutFields.keys(),
		"routing.health_score":         healthFields.keys(),
		"routing.affinity":             affinityFields.keys(),
		"channels[]":                   channelFields.keys(),
		"channels[].urls[]":            urlFields.keys(),
		"channels[].models[]":          modelFields.keys(),
		"channels[].rewrite":           rewriteFields.keys(),
		"channels[].rewrite.headers[]": headerRuleFields.keys(),
		"channels[].rewrite.body[]":    bodyRuleFields.keys(),
		"channels[].check":             checkFields.keys(),
		"tokens[]":                     tokenFields.keys(),
		"tokens[].channels":            channelRuleFields.keys(),
		"pricing.*":                    priceFields.keys(),
		"price_catalog":                priceCatalogFields.keys(),
	}
}
