package config

import (
	"slices"

	"gopkg.in/yaml.v3"

	"github.com/ccload/ccload/protocol"
)

// Channel credential sources (`credentials:`).
const (
	CredentialsKeys   = "keys"   // the channel's keys (default)
	CredentialsClient = "client" // the client's own Anthropic credential
)

// ClientKey is the one key placeholder of a `credentials: client`
// channel: key selection sees one key, and the engine sends the client's
// credential in its place. It is never sent.
const ClientKey Secret = "client:credential"

func decodeCredentials(d *decoder, n *yaml.Node, p string, c *Channel) {
	switch v, ok := d.str(n, p); {
	case !ok:
	case v == CredentialsKeys || v == "":
		c.Credentials = ""
	case v == CredentialsClient:
		c.Credentials = v
	default:
		d.addf(n, p, "unknown credentials %q (want keys or client)", v)
	}
}

// finishClientCredentials checks a `credentials: client` channel: it
// speaks Anthropic (Anthropic's terms forbid third-party use of
// subscription sign-ins, so ccload only relays a client's own credential
// to Anthropic, and pools none) and holds no keys. It reports whether the
// channel has its credentials.
func finishClientCredentials(d *decoder, seen map[string]*yaml.Node, ip string, c *Channel) bool {
	if c.Credentials != CredentialsClient {
		return false
	}
	if c.OAuth != "" {
		d.addf(seen["credentials"], join(ip, "credentials"), "credentials: client and oauth exclude each other")
	}
	if len(c.Keys) > 0 {
		d.addf(seen["keys"], join(ip, "keys"), "a credentials: client channel forwards the client's own credential; it takes no keys")
	}
	for i := range c.URLs {
		u := &c.URLs[i]
		if len(u.Protocols) == 0 {
			u.Protocols = []protocol.Family{protocol.Anthropic}
		} else if !slices.Equal(u.Protocols, []protocol.Family{protocol.Anthropic}) {
			d.addf(seen["urls"], join(ip, "urls"), "a credentials: client channel speaks only anthropic (a Claude credential is only good there)")
		}
	}
	c.Keys = []Secret{ClientKey}
	return true
}
