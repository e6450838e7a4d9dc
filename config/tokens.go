package config

import (
	"crypto/sha256"
	"encoding/hex"
	"path"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// channelRef is a channel name a token mentions, checked against the
// channels once the whole file is read (tokens may come first).
type channelRef struct {
	name string
	node *yaml.Node
	path string
}

var tokenFields = fields[Token]{
	nameField("name", func(t *Token) *string { return &t.Name }),
	{"token", func(d *decoder, n *yaml.Node, p string, t *Token) {
		// The plain token is hashed here and dropped: only the hash is kept,
		// and no message ever shows the value.
		v, ok := d.str(n, p)
		if ok && v == "" {
			d.addf(n, p, "is empty")
		} else if ok {
			sum := sha256.Sum256([]byte(v))
			t.SHA256 = hex.EncodeToString(sum[:])
		}
	}},
	{"token_sha256", func(d *decoder, n *yaml.Node, p string, t *Token) {
		v, ok := d.str(n, p)
		if !ok {
			return
		}
		if isSHA256Hex(strings.ToLower(v)) && v != strings.ToLower(v) {
			d.addf(n, p, "write the hex digits in lowercase")
			return
		}
		if !isSHA256Hex(v) {
			// Do not echo the value: it may be the token pasted by mistake.
			d.addf(n, p, "want the sha256 of the token as 64 lowercase hex digits, got %d characters (or use token: to give the token itself)", len(v))
			return
		}
		t.SHA256 = v
	}},
	{"models", func(d *decoder, n *yaml.Node, p string, t *Token) {
		d.seq(n, p, func(_ int, item *yaml.Node, ip string) {
			g, ok := d.str(item, ip)
			if !ok {
				return
			}
			if _, err := path.Match(g, ""); err != nil || g == "" {
				d.addf(item, ip, "invalid model glob %q (path.Match syntax: *, ?, [a-z])", g)
				return
			}
			t.Models = append(t.Models, g)
		})
	}},
	{"channels", func(d *decoder, n *yaml.Node, p string, t *Token) {
		seen := channelRuleFields.decode(d, n, p, &t.Channels)
		if len(t.Channels.Allow) > 0 && len(t.Channels.Deny) > 0 {
			d.addf(n, p, "set allow or deny, not both")
			t.Channels = ChannelRule{}
		} else if seen != nil && seen["allow"] != nil && len(t.Channels.Allow) == 0 && d.seqLen(seen["allow"]) == 0 {
			// An empty allow list would silently mean "all channels".
			d.addf(seen["allow"], join(p, "allow"), "empty allow list (remove it to allow every channel)")
		}
	}},
	numField("cost_limit", func(t *Token) *float64 { return &t.CostLimit }),
	intField("max_concurrency", 0, func(t *Token) *int { return &t.MaxConcurrency }),
	intField("rpm_limit", 0, func(t *Token) *int { return &t.RPMLimit }),
	{"expires", func(d *decoder, n *yaml.Node, p string, t *Token) {
		v, ok := d.str(n, p)
		if !ok {
			return
		}
		e, err := parseExpires(v)
		if err != nil {
			d.addf(n, p, `want a date like "2027-01-01" or an RFC 3339 time like "2027-01-01T00:00:00Z", got %q`, v)
			return
		}
		t.Expires = e
	}},
	boolField("debug", func(t *Token) *bool { return &t.Debug }),
}

var channelRuleFields = fields[ChannelRule]{
	{"allow", func(d *decoder, n *yaml.Node, p string, r *ChannelRule) { r.Allow = d.channelNames(n, p) }},
	{"deny", func(d *decoder, n *yaml.Node, p string, r *ChannelRule) { r.Deny = d.channelNames(n, p) }},
}

// channelNames reads a list of channel names and remembers where each was
// written, for the check against the channels.
func (d *decoder) channelNames(n *yaml.Node, p string) []string {
	var out []string
	d.seq(n, p, func(_ int, item *yaml.Node, ip string) {
		if v, ok := d.str(item, ip); ok {
			out = append(out, v)
			d.refs = append(d.refs, channelRef{v, item, ip})
		}
	})
	return out
}

// parseExpires reads a date (midnight at the start of that day, local time)
// or an RFC 3339 time.
func parseExpires(s string) (time.Time, error) {
	if t, err := time.ParseInLocation(time.DateOnly, s, time.Local); err == nil {
		return t, nil
	}
	return time.Parse(time.RFC3339, s)
}

func isSHA256Hex(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// decodeTokens reads `tokens:` and checks what needs the whole token or all
// tokens: a name, exactly one of token / token_sha256, unique names and
// unique tokens.
func decodeTokens(d *decoder, n *yaml.Node, p string, s *Snapshot) {
	names := map[string]string{}  // name -> path of the first token with it
	hashes := map[string]*Token{} // sha256 -> first token with it
	where := map[*Token]string{}  // token -> its path
	d.seq(n, p, func(_ int, item *yaml.Node, ip string) {
		t := new(Token)
		seen := tokenFields.decode(d, item, ip, t)
		if seen == nil {
			return
		}
		if isNull(d.resolve(seen["name"])) {
			d.addf(item, ip, "name is required")
		} else if t.Name == "" {
			// the value was bad: reported
		} else if prev, dup := names[t.Name]; dup {
			d.addf(seen["name"], join(ip, "name"), "duplicate token name %q (also %s)", t.Name, prev)
		} else {
			names[t.Name] = ip
		}
		hasPlain, hasHash := !isNull(d.resolve(seen["token"])), !isNull(d.resolve(seen["token_sha256"]))
		switch {
		case hasPlain && hasHash:
			d.addf(item, ip, "set token or token_sha256, not both")
			return
		case !hasPlain && !hasHash:
			d.addf(item, ip, "token or token_sha256 is required")
			return
		case t.SHA256 == "":
			return // the value was bad: reported
		}
		if prev, dup := hashes[t.SHA256]; dup {
			at := d.orNode(seen["token"], seen["token_sha256"])
			d.addf(at, ip, "same token as %s (%q)", where[prev], prev.Name)
			return
		}
		hashes[t.SHA256] = t
		where[t] = ip
		s.Tokens = append(s.Tokens, t)
	})
}
