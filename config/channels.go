package config

import (
	"errors"
	"net/url"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ccload/ccload/protocol"
)

var channelFields = fields[Channel]{
	nameField("name", func(c *Channel) *string { return &c.Name }),
	{"priority", func(d *decoder, n *yaml.Node, p string, c *Channel) {
		if v, ok := d.integer(n, p); ok { // any integer: negative sinks below the default 0
			c.Priority = v
		}
	}},
	intField("weight", 1, func(c *Channel) *int { return &c.Weight }),
	{"urls", decodeURLs},
	{"keys", decodeKeys},
	{"key_strategy", func(d *decoder, n *yaml.Node, p string, c *Channel) {
		switch v, ok := d.str(n, p); {
		case !ok:
		case v == KeyRoundRobin || v == KeySequential:
			c.KeyStrategy = v
		default:
			d.addf(n, p, "unknown key strategy %q (want round_robin or sequential)", v)
		}
	}},
	{"models", decodeModels},
	intField("rpm_limit", 0, func(c *Channel) *int { return &c.RPMLimit }),
	intField("max_concurrency", 0, func(c *Channel) *int { return &c.MaxConcurrency }),
	numField("daily_cost_limit", func(c *Channel) *float64 { return &c.DailyCostLimit }),
	{"active_hours", func(d *decoder, n *yaml.Node, p string, c *Channel) {
		v, ok := d.str(n, p)
		if !ok {
			return
		}
		h, err := ParseHours(v)
		if err != nil {
			d.addf(n, p, "%v", err)
			return
		}
		c.ActiveHours = h
	}},
	{"proxy", func(d *decoder, n *yaml.Node, p string, c *Channel) {
		v, ok := d.str(n, p)
		if !ok || v == "" { // "" = no proxy, so `proxy: ${X_PROXY:-}` works
			return
		}
		if msg := checkURL(v, "http", "https", "socks5", "socks5h"); msg != "" {
			d.addf(n, p, "%s", msg)
			return
		}
		c.Proxy = v
	}},
	numField("cost_multiplier", func(c *Channel) *float64 { return &c.CostMultiplier }),
	section("rewrite", rewriteFields, func(c *Channel) *Rewrite { return &c.Rewrite }),
	{"check", func(d *decoder, n *yaml.Node, p string, c *Channel) {
		ck := DefaultCheck
		seen := checkFields.decode(d, n, p, &ck)
		if seen == nil {
			return
		}
		if ck.Model == "" {
			d.addf(n, p, "model is required")
			return
		}
		c.Check = &ck
	}},
	boolField("enabled", func(c *Channel) *bool { return &c.Enabled }),
	boolField("web_search", func(c *Channel) *bool { return &c.WebSearch }),
	boolField("websockets", func(c *Channel) *bool { return &c.WebSockets }),
	boolField("affinity", func(c *Channel) *bool { return &c.Affinity }),
	boolField("debug", func(c *Channel) *bool { return &c.Debug }),
	{"oauth", decodeOAuth},
	{"credentials", decodeCredentials},
	{"accounts", decodeAccounts},
	strField("oauth_issuer", func(c *Channel) *string { return &c.OAuthIssuer }),
	strField("oauth_client_id", func(c *Channel) *string { return &c.OAuthClientID }),
}

// decodeChannels reads `channels:` in file order and checks what needs the
// whole channel: required parts, unique names, the check model.
func decodeChannels(d *decoder, n *yaml.Node, p string, s *Snapshot) {
	first := map[string]string{} // name -> path of the first channel with it
	d.seq(n, p, func(_ int, item *yaml.Node, ip string) {
		c := new(Channel)
		*c = DefaultChannel
		seen := channelFields.decode(d, item, ip, c)
		if seen == nil {
			return // not a mapping: reported
		}
		if isNull(d.resolve(seen["name"])) {
			d.addf(item, ip, "name is required")
		} else if c.Name == "" {
			// the value was bad: reported
		} else if prev, dup := first[c.Name]; dup {
			d.addf(seen["name"], join(ip, "name"), "duplicate channel name %q (also %s)", c.Name, prev)
		} else {
			first[c.Name] = ip
		}
		oauth := finishOAuth(d, item, ip, seen, c) || finishClientCredentials(d, seen, ip, c)
		if oauth {
			if d.oauthNodes == nil {
				d.oauthNodes = map[*Channel]*yaml.Node{}
			}
			d.oauthNodes[c] = seen["oauth"]
		}
		if c.Enabled {
			// Report a missing part only when nothing was written: an entry
			// that failed to decode was reported already.
			need := func(key, what string, have int) {
				n := d.resolve(seen[key])
				if have == 0 && (isNull(n) || n.Kind == yaml.SequenceNode && len(n.Content) == 0) {
					d.addf(d.orNode(n, item), ip, "an enabled channel needs at least one %s", what)
				}
			}
			need("urls", "URL (urls: [https://...])", len(c.URLs))
			if !oauth {
				need("keys", "key (keys: [...])", len(c.Keys))
			}
			need("models", "model (models: [...])", len(c.Models))
		}
		if c.Check != nil && !slices.ContainsFunc(c.Models, func(m Model) bool {
			return m.Name == c.Check.Model || m.Upstream == c.Check.Model
		}) {
			at := d.orNode(d.child(seen["check"], "model"), item)
			d.addf(at, join(ip, "check.model"), "%q is not a model of this channel", c.Check.Model)
		}
		s.Channels = append(s.Channels, c)
	})
}

var urlFields = fields[URL]{
	strField("url", func(u *URL) *string { return &u.URL }),
	{"protocols", func(d *decoder, n *yaml.Node, p string, u *URL) {
		d.seq(n, p, func(_ int, item *yaml.Node, ip string) {
			v, ok := d.str(item, ip)
			if !ok {
				return
			}
			f, err := protocol.ParseFamily(v)
			switch {
			case err != nil:
				d.addf(item, ip, "%v", err)
			case slices.Contains(u.Protocols, f):
				d.addf(item, ip, "protocol %s listed twice", f)
			default:
				u.Protocols = append(u.Protocols, f)
			}
		})
	}},
	boolField("exact", func(u *URL) *bool { return &u.Exact }),
}

// decodeURLs reads `urls:`, whose items are a URL string or
// {url, protocols, exact}.
func decodeURLs(d *decoder, n *yaml.Node, p string, c *Channel) {
	d.seq(n, p, func(_ int, item *yaml.Node, ip string) {
		var u URL
		at, atPath := d.resolve(item), ip
		if at == nil {
			return
		}
		switch at.Kind {
		case yaml.ScalarNode:
			v, ok := d.str(at, ip)
			if !ok {
				return
			}
			u.URL = v
		case yaml.SequenceNode:
			d.addf(at, ip, "want a URL or {url, protocols, exact}, got %s", describe(at))
			return
		default:
			seen := urlFields.decode(d, at, ip, &u)
			if seen == nil {
				return
			}
			if isNull(d.resolve(seen["url"])) {
				d.addf(at, ip, "url is required")
				return
			}
			at, atPath = seen["url"], join(ip, "url")
		}
		if msg := checkURL(u.URL, "http", "https"); msg != "" {
			d.addf(at, atPath, "%s", msg)
			return
		}
		if i := slices.IndexFunc(c.URLs, func(x URL) bool { return x.URL == u.URL }); i >= 0 {
			d.addf(at, atPath, "duplicate URL (also %s)", index(p, i))
			return
		}
		c.URLs = append(c.URLs, u)
	})
}

// checkURL returns what is wrong with raw as a URL of one of schemes, or "".
// The message never repeats the URL: it may carry credentials.
func checkURL(raw string, schemes ...string) string {
	want := strings.Join(schemes, ", ")
	if i := strings.LastIndex(want, ", "); i >= 0 {
		want = want[:i] + " or " + want[i+2:]
	}
	if raw == "" {
		return "empty URL"
	}
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return "invalid URL: " + err.Error()
	}
	if !strings.Contains(raw, "://") {
		return "want an absolute " + want + " URL like \"" + schemes[len(schemes)-1] + "://host:port\""
	}
	if !slices.Contains(schemes, u.Scheme) {
		return "unsupported URL scheme \"" + u.Scheme + "\" (want " + want + ")"
	}
	if u.Hostname() == "" {
		return "URL has no host"
	}
	return ""
}

// decodeKeys reads `keys:`. A key is a secret: messages name its index,
// never its value.
func decodeKeys(d *decoder, n *yaml.Node, p string, c *Channel) {
	d.seq(n, p, func(_ int, item *yaml.Node, ip string) {
		v, ok := d.str(item, ip)
		switch {
		case !ok:
		case v == "":
			d.addf(item, ip, "empty key")
		case slices.Contains(c.Keys, Secret(v)):
			d.addf(item, ip, "same key as %s", index(p, slices.Index(c.Keys, Secret(v))))
		default:
			c.Keys = append(c.Keys, Secret(v))
		}
	})
}

var modelFields = fields[Model]{
	nameField("name", func(m *Model) *string { return &m.Name }),
	strField("upstream", func(m *Model) *string { return &m.Upstream }),
	boolField("disabled", func(m *Model) *bool { return &m.Disabled }),
}

// decodeModels reads `models:`, whose items are a name or
// {name, upstream, disabled}. Upstream defaults to Name.
func decodeModels(d *decoder, n *yaml.Node, p string, c *Channel) {
	d.seq(n, p, func(_ int, item *yaml.Node, ip string) {
		var m Model
		at, atPath := d.resolve(item), ip
		if at == nil {
			return
		}
		switch at.Kind {
		case yaml.ScalarNode:
			v, ok := d.str(at, ip)
			if ok && v == "" {
				d.addf(at, ip, "empty model name")
			}
			m.Name = v
		case yaml.MappingNode:
			seen := modelFields.decode(d, at, ip, &m)
			if isNull(d.resolve(seen["name"])) {
				d.addf(at, ip, "name is required")
			}
			at, atPath = seen["name"], join(ip, "name")
		default:
			d.addf(at, ip, "want a model name or {name, upstream, disabled}, got %s", describe(at))
		}
		if m.Name == "" {
			return // reported
		}
		if m.Upstream == "" {
			m.Upstream = m.Name
		}
		if i := slices.IndexFunc(c.Models, func(x Model) bool { return x.Name == m.Name }); i >= 0 {
			d.addf(at, atPath, "duplicate model %q (also %s)", m.Name, index(p, i))
			return
		}
		c.Models = append(c.Models, m)
	})
}

var checkFields = fields[Check]{
	strField("model", func(c *Check) *string { return &c.Model }),
	{"every", func(d *decoder, n *yaml.Node, p string, c *Check) {
		if v, ok := d.duration(n, p); ok && v == 0 {
			d.addf(n, p, "must be greater than 0")
		} else if ok {
			c.Every = v
		}
	}},
}
