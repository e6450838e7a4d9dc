package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/ccload/ccload/admin/adminapi"
)

// accounts are a codex channel's accounts in every state the pane shows.
func accounts() *adminapi.AccountsResponse {
	until := at(2 * time.Hour)
	win := func(used float64, mins int, reset time.Duration) *adminapi.QuotaWindow {
		return &adminapi.QuotaWindow{UsedPercent: used, WindowMinutes: mins, ResetsAt: at(reset)}
	}
	return &adminapi.AccountsResponse{Time: t0, Accounts: []adminapi.Account{
		{Channel: "chatgpt", Account: "alice", Provider: "codex", State: "ok", RequestsToday: 12, CostToday: 0.42,
			Quota: adminapi.AccountQuota{Primary: win(42, 300, 3*time.Hour), Secondary: win(13, 10080, 100*time.Hour)}},
		{Channel: "chatgpt", Account: "bob", Provider: "codex", State: "exhausted", ExhaustedUntil: &until,
			Quota: adminapi.AccountQuota{Primary: win(100, 300, 2*time.Hour)}},
		{Channel: "chatgpt", Account: "carol", Provider: "codex", State: "invalid", Reason: "refresh_token_reused"},
		{Channel: "chatgpt", Account: "dave", Provider: "codex", State: "signed_out"},
	}}
}

func withChatGPT(r *adminapi.ChannelsResponse) *adminapi.ChannelsResponse {
	c := adminapi.Channel{State: "ok"}
	c.Name = "chatgpt"
	c.Models = []adminapi.ModelView{{Name: "gpt-5.4", Upstream: "gpt-5.4"}}
	c.Today = adminapi.Usage{Requests: 12, Cost: 0.42}
	r.Channels = append(r.Channels, c)
	return r
}

// TestTopChannelAccounts: an oauth channel's accounts are rows under it
// with their state, requests and cost today, and what the state means or
// the quota windows counting down to their reset.
func TestTopChannelAccounts(t *testing.T) {
	m := newModel(t, 120, 30)
	send(m, ChannelsMsg{Channels: withChatGPT(channels(42)), At: t0}, AccountsMsg{Accounts: accounts(), At: t0})
	golden(t, m, "accounts")
	row := func(name string) string {
		got := m.Render()
		lines := strings.Split(got, "\n")
		for i, l := range lines {
			if strings.HasPrefix(l, "└ "+name+" ") {
				if !strings.HasPrefix(lines[i-1], "└ ") && !strings.HasPrefix(lines[i-1], "chatgpt ") {
					t.Errorf("%s is not under its channel:\n%s", name, got)
				}
				return l
			}
		}
		t.Fatalf("no row for account %s:\n%s", name, got)
		return ""
	}
	for name, want := range map[string][]string{
		"alice": {" ok ", " 12 ", "$0.4200", "5h 42% resets 3h00m · wk 13% resets 100h00m"},
		"bob":   {" exhaust ", "exhausted, back in 2h00m · 5h 100% resets 2h00m"},
		"carol": {" invalid ", "invalid: refresh_token_reused"},
		"dave":  {" signout ", "signed out: ccload login"},
	} {
		r := row(name)
		for _, w := range want {
			if !strings.Contains(r, w) {
				t.Errorf("%s: %q missing in %q", name, w, r)
			}
		}
	}
	// The quota windows count down on our clock.
	send(m, TickMsg{Time: at(time.Hour)})
	if r := row("alice"); !strings.Contains(r, "5h 42% resets 2h00m") {
		t.Errorf("after an hour: %q", r)
	}
	// A failed refresh hides the accounts instead of showing stale states.
	send(m, AccountsMsg{Err: errFake, At: at(time.Hour)})
	if got := m.Render(); strings.Contains(got, "└ alice") {
		t.Errorf("accounts still shown after an error:\n%s", got)
	}
}

// TestTopAccountsRefreshSpaced: accounts are asked for on the first
// refresh and then at most every accountsEvery, not on every tick.
func TestTopAccountsRefreshSpaced(t *testing.T) {
	now := t0
	src := &countingSource{}
	m := New(src, Options{Now: func() time.Time { return now }})
	for i := range 12 {
		now = at(time.Duration(i) * time.Second)
		if cmd := m.refresh(); cmd != nil {
			runAll(cmd)
		}
	}
	if src.accounts != 3 { // at 0 s, 5 s and 10 s
		t.Errorf("accounts asked %d times in 12 refreshes a second apart, want 3", src.accounts)
	}
}

type countingSource struct {
	fakeSource
	accounts int
}

func (s *countingSource) Accounts(context.Context) (*adminapi.AccountsResponse, error) {
	s.accounts++
	return nil, errFake
}

// runAll runs cmd and the commands of the batches it returns.
func runAll(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	if b, ok := cmd().(tea.BatchMsg); ok {
		for _, c := range b {
			runAll(c)
		}
	}
}
