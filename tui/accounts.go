package tui

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ccload/ccload/admin/adminapi"
)

// setAccounts stores the subscription accounts (GET /admin/accounts),
// shown in the channels pane under their oauth channel.
func (p *ChannelsPane) setAccounts(list []adminapi.Account, at time.Time) {
	p.accounts, p.accountsAt = map[string][]adminapi.Account{}, at
	for _, a := range list {
		p.accounts[a.Channel] = append(p.accounts[a.Channel], a)
	}
}

// accountRows are the rows of channel's accounts: "└ NAME", the state,
// requests and cost today, and in the last column what the state means
// and the quota windows.
func (p *ChannelsPane) accountRows(st Styles, channel string, now time.Time) [][]cell {
	var out [][]cell
	for _, a := range p.accounts[channel] {
		state := cell{text: accountState(a.State)}
		switch a.State {
		case "ok":
			state.style = &st.OK
		case "refreshing", "exhausted":
			state.style = &st.Warn
		case "invalid", "undecryptable":
			state.style = &st.Err
		default:
			state.style = &st.Dim
		}
		detail := plain(accountDetail(a, now))
		if a.State != "ok" && a.State != "refreshing" {
			detail.style = state.style
		}
		out = append(out, []cell{
			plain("└ " + a.Account), state, plain(""), plain(""),
			plain(strconv.FormatInt(a.RequestsToday, 10)), plain(""), plain(fmt.Sprintf("$%.4f", a.CostToday)), plain(""), detail,
		})
	}
	return out
}

// accountState fits a state in the STATE column.
func accountState(s string) string {
	switch s {
	case "exhausted":
		return "exhaust"
	case "signed_out":
		return "signout"
	case "undecryptable":
		return "sealed"
	case "unconfigured":
		return "unconf"
	case "refreshing":
		return "refresh"
	}
	return s
}

// accountDetail says what the state means (docs/accounts.md) and the
// quota windows: "exhausted, back in 2h00m · 5h 100% resets 2h00m",
// "invalid: refresh_token_reused", "5h 42% resets 3h00m · wk 13%".
func accountDetail(a adminapi.Account, now time.Time) string {
	var parts []string
	switch a.State {
	case "exhausted":
		if a.ExhaustedUntil != nil {
			// A countdown, as the cooldowns: no time zone to guess.
			parts = append(parts, "exhausted, back in "+countdown(a.ExhaustedUntil.Sub(now)))
		}
	case "invalid":
		parts = append(parts, "invalid: "+a.Reason)
	case "signed_out":
		parts = append(parts, "signed out: ccload login")
	case "undecryptable":
		parts = append(parts, "undecryptable: another server.secret_key")
	case "unconfigured":
		parts = append(parts, "not in the config")
	}
	if w := a.Quota.Primary; w != nil {
		parts = append(parts, quotaWindow("5h", w, now))
	}
	if w := a.Quota.Secondary; w != nil {
		parts = append(parts, quotaWindow("wk", w, now))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " · ")
}

func quotaWindow(label string, w *adminapi.QuotaWindow, now time.Time) string {
	s := fmt.Sprintf("%s %s%%", label, strconv.FormatFloat(w.UsedPercent, 'f', -1, 64))
	if !w.ResetsAt.IsZero() && w.ResetsAt.After(now) {
		s += " resets " + countdown(w.ResetsAt.Sub(now))
	}
	return s
}
