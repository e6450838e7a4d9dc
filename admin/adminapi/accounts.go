package adminapi

import (
	"context"
	"time"
)

// AccountsResponse is GET /admin/accounts: the subscription accounts of
// the oauth channels (docs/accounts.md). No credential is in it.
type AccountsResponse struct {
	Time     time.Time `json:"time"`
	Accounts []Account `json:"accounts"`
}

// Account is one signed-in (or named, not signed-in) subscription account.
type Account struct {
	Channel  string `json:"channel"`
	Account  string `json:"account"`
	Provider string `json:"provider"` // codex | xai
	// State is ok, refreshing, exhausted (until ExhaustedUntil), invalid
	// (Reason says why), signed_out, undecryptable or unconfigured.
	State          string       `json:"state"`
	Reason         string       `json:"reason,omitempty"`
	ExhaustedUntil *time.Time   `json:"exhausted_until,omitempty"`
	AccessExpires  *time.Time   `json:"access_expires,omitempty"`
	LastRefresh    *time.Time   `json:"last_refresh,omitempty"`
	Quota          AccountQuota `json:"quota"`
	Subject        string       `json:"subject,omitempty"` // the provider's account id as a fingerprint
	RequestsToday  int64        `json:"requests_today"`
	CostToday      float64      `json:"cost_today"`
}

// AccountQuota is the quota windows the provider last reported: Codex has
// a primary (five hours) and a secondary (weekly) window. nil: not known.
type AccountQuota struct {
	Primary   *QuotaWindow `json:"primary,omitempty"`
	Secondary *QuotaWindow `json:"secondary,omitempty"`
}

// QuotaWindow is one quota window.
type QuotaWindow struct {
	UsedPercent   float64   `json:"used_percent"`
	WindowMinutes int       `json:"window_minutes,omitempty"`
	ResetsAt      time.Time `json:"resets_at,omitzero"`
}

// Accounts is GET /admin/accounts.
func (c *Client) Accounts(ctx context.Context) (*AccountsResponse, error) {
	var out AccountsResponse
	return &out, c.do(ctx, "GET", "/admin/accounts", nil, &out)
}
