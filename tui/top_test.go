package tui

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/ccload/ccload/admin/adminapi"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// t0 is the fixed clock of every test.
var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

// fakeSource is never called: the tests feed messages, not commands.
type fakeSource struct{}

var errFake = errors.New("fakeSource: not called in tests")

func (fakeSource) BaseURL() string { return "http://127.0.0.1:8080" }
func (fakeSource) Status(context.Context) (*adminapi.Status, error) {
	return nil, errFake
}
func (fakeSource) Channels(context.Context) (*adminapi.ChannelsResponse, error) {
	return nil, errFake
}
func (fakeSource) Accounts(context.Context) (*adminapi.AccountsResponse, error) {
	return nil, errFake
}
func (fakeSource) Active(context.Context) (*adminapi.ActiveResponse, error) {
	return nil, errFake
}
func (fakeSource) Events(context.Context, ...string) (*adminapi.EventStream, error) {
	return nil, errFake
}

func status() *adminapi.Status {
	return &adminapi.Status{StartedAt: t0.Add(-time.Hour), UptimeSeconds: 3600, InFlight: 1,
		Config: adminapi.ConfigStatus{File: "ccload.yaml", LoadedAt: t0.Add(-5 * time.Minute), Reloads: 2, Channels: 3}}
}

func channels(cooldownLeft int64) *adminapi.ChannelsResponse {
	ch := func(name, state string, models ...string) adminapi.Channel {
		c := adminapi.Channel{State: state}
		c.Name = name
		for _, m := range models {
			c.Models = append(c.Models, adminapi.ModelView{Name: m, Upstream: m})
		}
		return c
	}
	main := ch("anthropic-main", "degraded", "claude-sonnet-4-6", "claude-opus-4-8")
	main.InFlight, main.RPM, main.Today = 1, 12, adminapi.Usage{Requests: 340, Errors: 3, Cost: 4.21, InputTokens: 1_000_000, Cache: adminapi.Cache{CacheReadTokens: 870_000, CacheHitRate: 0.87}}
	main.Cooldowns = []adminapi.Cooldown{
		{Scope: "key", Channel: "anthropic-main", Key: "sk-a…f3c9#1a2b3c4d", SecondsLeft: cooldownLeft, Kind: "rate_limit"},
		{Scope: "model", Channel: "anthropic-main", Model: "claude-opus-4-8", SecondsLeft: 125, Kind: "server"},
	}
	oa := ch("openai-main", "ok", "gpt-5", "gpt-5-mini")
	oa.Today = adminapi.Usage{Requests: 80, Cost: 0.5}
	backup := ch("anthropic-backup", "cooling", "claude-sonnet-4-6")
	backup.Cooldowns = []adminapi.Cooldown{{Scope: "channel", Channel: "anthropic-backup", SecondsLeft: 9, Kind: "server"}}
	return &adminapi.ChannelsResponse{Time: t0, Channels: []adminapi.Channel{main, oa, backup}}
}

// newModel is a connected model at t0 with status and channels loaded.
func newModel(t *testing.T, w, h int) *Model {
	t.Helper()
	m := New(fakeSource{}, Options{})
	send(m, tea.WindowSizeMsg{Width: w, Height: h},
		ConnectedMsg{At: t0},
		StatusMsg{Status: status(), At: t0},
		ChannelsMsg{Channels: channels(42), At: t0})
	return m
}

func send(m *Model, msgs ...tea.Msg) {
	for _, msg := range msgs {
		m.Update(msg)
	}
}

func key(s string) tea.KeyPressMsg {
	switch s {
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	}
	r := []rune(s)[0]
	return tea.KeyPressMsg{Code: r, Text: s}
}

func typeText(m *Model, s string) {
	for _, r := range s {
		m.Update(key(string(r)))
	}
}

// ev builds an event of request id at time d after t0.
func ev(typ string, id uint64, d time.Duration, f func(*adminapi.Event)) EventMsg {
	e := adminapi.Event{Type: typ, ID: id, Time: at(d), Token: "alice", ClientProtocol: "anthropic",
		UpstreamProtocol: "anthropic", Model: "claude-sonnet-4-6", Channel: "anthropic-main",
		URLHost: "api.anthropic.com", Stream: true, ElapsedMs: d.Milliseconds()}
	if f != nil {
		f(&e)
	}
	return EventMsg{Event: e, At: at(d)}
}

// golden compares the view with testdata/name.golden and checks that no
// line is wider than the terminal.
func golden(t *testing.T, m *Model, name string) string {
	t.Helper()
	got := m.View().Content
	w := m.width
	for i, l := range strings.Split(got, "\n") {
		if n := ansi.StringWidth(l); n > w {
			t.Errorf("%s: line %d is %d cells wide, more than %d: %q", name, i+1, n, w, l)
		}
		if strings.Contains(l, "\x1b") {
			t.Errorf("%s: line %d has escape codes without colour: %q", name, i+1, l)
		}
	}
	if h := strings.Count(got, "\n") + 1; h != m.high {
		t.Errorf("%s: %d lines, want the height %d", name, h, m.high)
	}
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return got
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s: view differs from %s (go test -update rewrites it)\n--- got\n%s\n--- want\n%s", name, path, got, want)
	}
	return got
}

func TestTopRequestLifecycle(t *testing.T) {
	m := newModel(t, 120, 30)
	send(m, ev("start", 7, 100*time.Millisecond, nil))
	got := golden(t, m, "lifecycle_start")
	if !strings.Contains(got, "Active requests (1)") || !strings.Contains(got, "anthropic->anthropic") {
		t.Errorf("start event not in the active table:\n%s", got)
	}

	send(m,
		ev("first_byte", 7, 700*time.Millisecond, func(e *adminapi.Event) { e.TTFBMs = 640 }),
		ev("progress", 7, 2500*time.Millisecond, func(e *adminapi.Event) { e.OutputTokens = 312 }),
		FrameMsg{Time: at(3 * time.Second)})
	got = golden(t, m, "lifecycle_progress")
	for _, want := range []string{"640ms", "312", "3.0s"} {
		if !strings.Contains(got, want) {
			t.Errorf("progress: %q missing:\n%s", want, got)
		}
	}

	send(m,
		ev("end", 7, 5120*time.Millisecond, func(e *adminapi.Event) {
			e.TTFBMs, e.OutputTokens, e.InputTokens, e.Status = 640, 812, 5400, 200
		}),
		ev("start", 8, 5200*time.Millisecond, func(e *adminapi.Event) { e.Model, e.Stream = "gpt-5", false }),
		ev("end", 8, 5300*time.Millisecond, func(e *adminapi.Event) {
			e.Model, e.Channel, e.ClientProtocol, e.UpstreamProtocol = "gpt-5", "openai-main", "openai", "openai"
			e.Status, e.FailureScope, e.Error = 500, "channel", "upstream 500: internal error"
		}),
		TickMsg{Time: at(6 * time.Second)})
	got = golden(t, m, "lifecycle_end")
	if !strings.Contains(got, "Active requests (0)") || !strings.Contains(got, "Finished (2)") {
		t.Errorf("end did not move the request to finished:\n%s", got)
	}
	if !regexp.MustCompile(`FAIL +500 channel`).MatchString(got) {
		t.Errorf("failure not marked in text:\n%s", got)
	}
	if !strings.Contains(got, "req/s 0.33  errors 50.0%") {
		t.Errorf("rates wrong:\n%s", got)
	}
}

func TestTopCooldownCountdown(t *testing.T) {
	m := newModel(t, 120, 30)
	got := golden(t, m, "cooldown_0s")
	if !strings.Contains(got, "key sk-a…f3c9#1a2b3c4d 42s") {
		t.Errorf("cooldown missing:\n%s", got)
	}
	send(m, TickMsg{Time: at(5 * time.Second)})
	got = golden(t, m, "cooldown_5s")
	for _, want := range []string{"key sk-a…f3c9#1a2b3c4d 37s", "model claude-opus-4-8 2m00s", "channel 4s"} {
		if !strings.Contains(got, want) {
			t.Errorf("after 5 s: %q missing:\n%s", want, got)
		}
	}
	send(m, TickMsg{Time: at(10 * time.Second)})
	if got := m.Render(); !strings.Contains(got, "channel ending") {
		t.Errorf("an elapsed cooldown should read 'ending':\n%s", got)
	}
}

func twoRequests(m *Model) {
	send(m,
		ev("start", 1, 0, nil),
		ev("progress", 1, time.Second, func(e *adminapi.Event) { e.OutputTokens = 10 }),
		ev("start", 2, 500*time.Millisecond, func(e *adminapi.Event) {
			e.Model, e.Channel, e.ClientProtocol, e.UpstreamProtocol = "gpt-5", "openai-main", "responses", "openai"
			e.URLHost = "api.openai.com"
		}),
		ev("progress", 2, 1500*time.Millisecond, func(e *adminapi.Event) {
			e.Model, e.Channel, e.ClientProtocol, e.UpstreamProtocol = "gpt-5", "openai-main", "responses", "openai"
			e.URLHost, e.OutputTokens = "api.openai.com", 900
		}),
		FrameMsg{Time: at(2 * time.Second)})
}

// rowOrder is the order of the models in the active pane.
func rowOrder(t *testing.T, view string) string {
	t.Helper()
	s, g := strings.Index(view, "claude-sonnet-4-6"), strings.Index(view, "gpt-5")
	if s < 0 || g < 0 {
		return "missing"
	}
	if s < g {
		return "claude,gpt"
	}
	return "gpt,claude"
}

func TestTopSortKey(t *testing.T) {
	m := newModel(t, 120, 30)
	twoRequests(m)
	if o := rowOrder(t, m.Render()); o != "claude,gpt" {
		t.Fatalf("by elapsed (oldest first): order %s", o)
	}
	send(m, key("s"))
	got := golden(t, m, "sort_tokens")
	if !strings.Contains(got, "sort: tokens") || rowOrder(t, got) != "gpt,claude" {
		t.Errorf("s should sort by tokens:\n%s", got)
	}
	// tab moves the focus; s then sorts the finished pane, not the active one.
	send(m, key("tab"), key("s"))
	got = m.Render()
	if !strings.Contains(got, "> Finished (0)  sort: duration") || !strings.Contains(got, "Active requests (2)  sort: tokens") {
		t.Errorf("tab then s:\n%s", got)
	}
	send(m, key("tab"), key("tab"))
	if !strings.Contains(m.Render(), "> Active requests") {
		t.Errorf("tab should cycle back to the active pane:\n%s", m.Render())
	}
}

func TestTopFilterKey(t *testing.T) {
	m := newModel(t, 120, 30)
	twoRequests(m)
	send(m, key("/"))
	typeText(m, "gptx")
	send(m, tea.KeyPressMsg{Code: tea.KeyBackspace})
	if got := m.Render(); !strings.Contains(got, "filter (channel or model): gpt_") {
		t.Errorf("filter prompt:\n%s", got)
	}
	send(m, key("enter"))
	got := golden(t, m, "filter_gpt")
	if strings.Contains(got, "claude-sonnet-4-6") || !strings.Contains(got, "gpt-5") {
		t.Errorf("filter gpt should hide claude rows:\n%s", got)
	}
	if !strings.Contains(got, "openai-main") || strings.Contains(got, "anthropic-backup") {
		t.Errorf("filter should apply to channels by name or model:\n%s", got)
	}
	send(m, key("esc"))
	if got := m.Render(); !strings.Contains(got, "claude-sonnet-4-6") {
		t.Errorf("esc should clear the filter:\n%s", got)
	}
	// "q" while typing a filter is text, not quit.
	send(m, key("/"))
	if _, cmd := m.Update(key("q")); cmd != nil {
		t.Errorf("q in the filter prompt returned a command")
	}
}

func TestTopPauseKey(t *testing.T) {
	m := newModel(t, 120, 30)
	twoRequests(m)
	send(m, key("p"))
	before := m.Render()
	send(m,
		ev("end", 1, 3*time.Second, func(e *adminapi.Event) { e.Status = 200 }),
		ChannelsMsg{Channels: channels(5), At: at(3 * time.Second)},
		FrameMsg{Time: at(4 * time.Second)}, TickMsg{Time: at(4 * time.Second)})
	got := golden(t, m, "paused")
	if !strings.Contains(got, "[PAUSED, 1 events held]") {
		t.Errorf("pause not shown:\n%s", got)
	}
	if strip := func(s string) string { return strings.SplitN(s, "\n", 2)[1] }; strip(got) != strip(before) {
		t.Errorf("paused view changed below the first line:\n%s\n--- before\n%s", got, before)
	}
	send(m, key("p"))
	got = m.Render()
	if !strings.Contains(got, "Active requests (1)") || !strings.Contains(got, "Finished (1)") || !strings.Contains(got, "[live]") {
		t.Errorf("resume should apply the held end:\n%s", got)
	}
}

func TestTopQuitKeys(t *testing.T) {
	for _, k := range []string{"q", "ctrl+c"} {
		m := newModel(t, 80, 24)
		_, cmd := m.Update(key(k))
		if cmd == nil {
			t.Fatalf("%s: no command", k)
		}
		if _, ok := cmd().(tea.QuitMsg); !ok {
			t.Errorf("%s: want tea.QuitMsg", k)
		}
	}
}

func TestTopHelp(t *testing.T) {
	m := newModel(t, 80, 24)
	send(m, key("?"))
	got := golden(t, m, "help")
	if !strings.Contains(got, "Keys") {
		t.Errorf("no help:\n%s", got)
	}
	send(m, key("esc"))
	if strings.Contains(m.Render(), "toggle this help") {
		t.Error("esc should close the help")
	}
}

func TestTopNarrow(t *testing.T) {
	m := newModel(t, 60, 20)
	twoRequests(m)
	send(m, ev("end", 1, 3*time.Second, func(e *adminapi.Event) {
		e.Status, e.FailureScope, e.Error = 429, "key", "rate limited"
	}))
	got := golden(t, m, "narrow_60")
	for _, want := range []string{"MODEL", "gpt-5", "FAIL", "429", "key", "anthropic-main"} {
		if !strings.Contains(got, want) {
			t.Errorf("60 columns: %q missing:\n%s", want, got)
		}
	}
	// Even tinier: still no line past the width (golden checks widths).
	send(m, tea.WindowSizeMsg{Width: 30, Height: 10})
	for i, l := range strings.Split(m.Render(), "\n") {
		if n := ansi.StringWidth(l); n > 30 {
			t.Errorf("30 columns: line %d is %d wide: %q", i, n, l)
		}
	}
}

func TestTopUnreachable(t *testing.T) {
	m := New(fakeSource{}, Options{})
	refused := &adminapi.NotRunningError{URL: "http://127.0.0.1:8080", Err: syscall.ECONNREFUSED}
	send(m, tea.WindowSizeMsg{Width: 100, Height: 16},
		ConnectedMsg{Err: refused, At: t0},
		StatusMsg{Err: refused, At: t0},
		ChannelsMsg{Err: refused, At: t0},
		ConnectedMsg{Err: refused, At: at(600 * time.Millisecond)})
	got := golden(t, m, "unreachable")
	for _, want := range []string{"Cannot reach ccload at http://127.0.0.1:8080", "connection refused", "attempt 2", "reconnecting"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q missing:\n%s", want, got)
		}
	}
}

func TestTopReconnecting(t *testing.T) {
	m := newModel(t, 100, 24)
	twoRequests(m)
	send(m, DisconnectedMsg{Err: errors.New("the server closed the event stream"), At: at(3 * time.Second)})
	got := golden(t, m, "reconnecting")
	if !strings.Contains(got, "[reconnecting… next try in 1s]") || !strings.Contains(got, "Active requests (2)") {
		t.Errorf("a short outage keeps the panes and says reconnecting:\n%s", got)
	}
	// Gone for longer than unreachableAfter: the panes give way.
	send(m, ConnectedMsg{Err: &adminapi.NotRunningError{URL: "x", Err: syscall.ECONNREFUSED}, At: at(14 * time.Second)})
	if got := m.Render(); !strings.Contains(got, "Cannot reach ccload") {
		t.Errorf("after %s down, want the message:\n%s", unreachableAfter, got)
	}
	// Back: the active table is the server's snapshot (ids restarted).
	send(m, ConnectedMsg{At: at(15 * time.Second), Active: []adminapi.Event{ev("progress", 1, time.Second, nil).Event}})
	got = m.Render()
	if !strings.Contains(got, "[live]") || !strings.Contains(got, "Active requests (1)") {
		t.Errorf("after reconnecting:\n%s", got)
	}
}

func TestTopConfigError(t *testing.T) {
	m := newModel(t, 100, 24)
	st := status()
	st.Config.Error = "ccload.yaml:14:7: channels[1].priority: want integer, got \"high\""
	send(m, StatusMsg{Status: st, At: t0})
	if got := m.Render(); !strings.Contains(got, `config RELOAD FAILED, previous config serving: ccload.yaml:14:7: channels[1].priority`) {
		t.Errorf("reload error not shown:\n%s", got)
	}
}

func TestTopColorOnlyWithColor(t *testing.T) {
	m := New(fakeSource{}, Options{Color: true})
	send(m, tea.WindowSizeMsg{Width: 100, Height: 24}, ConnectedMsg{At: t0})
	if !strings.Contains(m.Render(), "\x1b[") {
		t.Skip("lipgloss rendered no escape codes here") // colour depends on the renderer
	}
	for i, l := range strings.Split(m.Render(), "\n") {
		if n := ansi.StringWidth(l); n > 100 {
			t.Errorf("coloured line %d is %d wide", i, n)
		}
	}
}

func TestTopStatusErrorDropsStaleStatus(t *testing.T) {
	m := newModel(t, 100, 24)
	send(m, StatusMsg{Err: errors.New("admin API /admin/status: timeout"), At: at(time.Second)})
	got := m.Render()
	if strings.Contains(got, "up 1h00m") || !strings.Contains(got, "status: admin API /admin/status: timeout") {
		t.Errorf("a failed status refresh should replace the stale status:\n%s", got)
	}
}
