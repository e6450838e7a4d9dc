package config

import (
	"time"

	"gopkg.in/yaml.v3"
)

// PriceCatalog is the `price_catalog:` section: where the server fetches
// model prices from, in the models.dev api.json format. A zero URL turns the
// catalog off; the embedded table and `pricing:` then price everything.
type PriceCatalog struct {
	URL     string   // http(s) URL of the document; "" = no catalog
	Refresh Duration // how often it is fetched again
	Proxy   string   // http, https or socks5 proxy for the fetch, like a channel's; "" = direct
}

// Values of routing.unpriced: what a request for a model without a price
// does when a cost limit applies to it (a token's cost_limit or a channel's
// daily_cost_limit).
const (
	UnpricedRefuse = "refuse" // answer 403: the limit could not be enforced
	UnpricedAllow  = "allow"  // serve it, log it as unpriced with cost 0
)

// DefaultPriceCatalog is the `price_catalog:` section when the file says
// nothing (no URL, so no catalog).
var DefaultPriceCatalog = PriceCatalog{Refresh: Duration(6 * time.Hour)}

// minCatalogRefresh keeps a typo such as "6s" from fetching a large
// document several times a minute.
const minCatalogRefresh = time.Minute

var priceCatalogFields = fields[PriceCatalog]{
	{"url", func(d *decoder, n *yaml.Node, p string, c *PriceCatalog) {
		v, ok := d.str(n, p)
		if !ok || v == "" { // "" = off, so `url: ${PRICE_CATALOG:-}` works
			return
		}
		if msg := checkURL(v, "http", "https"); msg != "" {
			d.addf(n, p, "%s", msg)
			return
		}
		c.URL = v
	}},
	{"refresh", func(d *decoder, n *yaml.Node, p string, c *PriceCatalog) {
		if x, ok := d.duration(n, p); ok && time.Duration(x) < minCatalogRefresh {
			d.addf(n, p, "must be at least %s, got %s", minCatalogRefresh, time.Duration(x))
		} else if ok {
			c.Refresh = x
		}
	}},
	{"proxy", func(d *decoder, n *yaml.Node, p string, c *PriceCatalog) {
		v, ok := d.str(n, p)
		if !ok || v == "" {
			return
		}
		if msg := checkURL(v, "http", "https", "socks5", "socks5h"); msg != "" {
			d.addf(n, p, "%s", msg)
			return
		}
		c.Proxy = v
	}},
}

// unpricedField reads routing.unpriced.
var unpricedField = field[Routing]{"unpriced", func(d *decoder, n *yaml.Node, p string, r *Routing) {
	switch v, ok := d.str(n, p); {
	case !ok:
	case v == UnpricedRefuse || v == UnpricedAllow:
		r.Unpriced = v
	default:
		d.addf(n, p, "unknown value %q (want refuse or allow)", v)
	}
}}
