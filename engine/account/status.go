package account

import (
	"time"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/store"
)

// Status is one account as `ccload accounts --json` and the admin API show
// it: state and quota, never a credential (the subject is a fingerprint).
type Status struct {
	Channel  string `json:"channel"`
	Account  string `json:"account"`
	Provider string `json:"provider"`
	// State is ok, refreshing, exhausted, invalid, signed_out (named in
	// the config, not signed in), undecryptable (sealed with another
	// secret_key) or unconfigured (signed in, no longer in the config).
	State          string     `json:"state"`
	Reason         string     `json:"reason,omitempty"`
	ExhaustedUntil *time.Time `json:"exhausted_until,omitempty"`
	AccessExpires  *time.Time `json:"access_expires,omitempty"`
	LastRefresh    *time.Time `json:"last_refresh,omitempty"`
	Quota          Quota      `json:"quota"`
	Subject        string     `json:"subject,omitempty"`
	// RequestsToday and CostToday are the requests the account served
	// since 00:00 UTC and their cost in USD, from the request logs.
	RequestsToday int64   `json:"requests_today"`
	CostToday     float64 `json:"cost_today"`
}

// AddUsage fills RequestsToday and CostToday from store.AccountUsage.
func AddUsage(list []Status, use map[[2]string]store.AccountUse) {
	for i := range list {
		u := use[[2]string{list[i].Channel, list[i].Account}]
		list[i].RequestsToday, list[i].CostToday = u.Requests, u.Cost
	}
}

// StartOfDay is 00:00 UTC of t's day, where "today" starts.
func StartOfDay(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// Account states shown.
const (
	StateOK            = "ok"
	StateRefreshing    = "refreshing"
	StateExhausted     = "exhausted"
	StateInvalid       = "invalid"
	StateSignedOut     = "signed_out"
	StateUndecryptable = "undecryptable"
	StateUnconfigured  = "unconfigured"
)

// Describe lists the accounts of snap's oauth channels, in file order,
// then rows of accounts the config no longer names. key opens the
// credentials only to tell whether they can be; refreshing says whether
// a refresh runs now (nil: never).
func Describe(rows []store.Account, snap *config.Snapshot, key []byte, now time.Time, refreshing func(channel, account string) bool) []Status {
	byID := map[id]store.Account{}
	for _, r := range rows {
		byID[id{r.Channel, r.Account}] = r
	}
	var out []Status
	for _, ch := range snap.Channels {
		for _, a := range ch.Accounts {
			r, ok := byID[id{ch.Name, a}]
			delete(byID, id{ch.Name, a})
			if !ok {
				out = append(out, Status{Channel: ch.Name, Account: a, Provider: ch.OAuth, State: StateSignedOut, Reason: "not signed in: ccload login " + ch.OAuth + " --channel " + ch.Name + " --account " + a})
				continue
			}
			out = append(out, describe(r, key, now, refreshing))
		}
	}
	for _, r := range rows {
		if _, left := byID[id{r.Channel, r.Account}]; left {
			s := describe(r, key, now, refreshing)
			s.State, s.Reason = StateUnconfigured, "signed in, but the config names no such account"
			out = append(out, s)
		}
	}
	return out
}

func describe(r store.Account, key []byte, now time.Time, refreshing func(string, string) bool) Status {
	s := Status{Channel: r.Channel, Account: r.Account, Provider: r.Provider, State: StateOK,
		Quota: parseQuota(r.Quota), Subject: r.SubjectFP,
		AccessExpires: timePtr(r.AccessExpires), LastRefresh: timePtr(r.LastRefresh)}
	_, err := Open(key, r.Channel, r.Account, r.Credential)
	switch {
	case err != nil:
		s.State, s.Reason = StateUndecryptable, err.Error()
	case r.State == store.AccountInvalid:
		s.State, s.Reason = StateInvalid, r.Reason
	case now.Before(r.ExhaustedUntil):
		s.State, s.ExhaustedUntil = StateExhausted, timePtr(r.ExhaustedUntil)
	case refreshing != nil && refreshing(r.Channel, r.Account), now.Before(r.ClaimedUntil):
		// This process refreshes it, or another instance holds the row's
		// claim (store.LockAccount) for its refresh.
		s.State = StateRefreshing
	}
	return s
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}
