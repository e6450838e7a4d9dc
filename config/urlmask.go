package config

import (
	"net/url"
	"strings"
)

// MaskURL hides what a URL may carry as a credential: the userinfo
// password (or a lone user name) and every query value (Gemini-style
// ?key=) become fingerprints. A URL that does not parse is fingerprinted
// whole. It is idempotent: a value already fingerprinted (holding "…") is
// kept, so a URL masked when recorded reads the same when shown again.
// Every URL that is logged, stored, printed or served goes through it.
func MaskURL(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil {
		return Fingerprint(raw)
	}
	fp := func(s string) string {
		if strings.Contains(s, "…") {
			return s
		}
		return Fingerprint(s)
	}
	if u.User != nil {
		if pw, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), fp(pw))
		} else {
			u.User = url.User(fp(u.User.Username()))
		}
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k, vs := range q {
			for i, v := range vs {
				vs[i] = fp(v)
			}
			q[k] = vs
		}
		u.RawQuery = q.Encode()
	}
	// The fingerprint's "…" would come out escaped; keep it readable.
	return strings.ReplaceAll(u.String(), "%E2%80%A6", "…")
}
