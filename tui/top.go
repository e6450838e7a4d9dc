// Package tui is `ccload top`: a full-screen live view of a running
// ccload, fed by the admin API's event stream (/admin/events) and a 1 s
// refresh of /admin/status and /admin/channels.
//
// One model per pane (ActivePane, FinishedPane, ChannelsPane), one typed
// message per thing that happens (EventMsg, StatusMsg, ChannelsMsg,
// ConnectedMsg, DisconnectedMsg, TickMsg, FrameMsg), Update routes them
// and View composes the panes (STYLE practice 22). The model never reads
// the clock itself: every message carries its time, so tests drive it
// with plain Update and View calls.
package tui

import (
	"context"
	"errors"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/ccload/ccload/admin/adminapi"
)

// Source is the running server; *adminapi.Client is one.
type Source interface {
	BaseURL() string
	Status(ctx context.Context) (*adminapi.Status, error)
	Channels(ctx context.Context) (*adminapi.ChannelsResponse, error)
	Accounts(ctx context.Context) (*adminapi.AccountsResponse, error)
	Active(ctx context.Context) (*adminapi.ActiveResponse, error)
	Events(ctx context.Context, types ...string) (*adminapi.EventStream, error)
}

// Options configure the view.
type Options struct {
	// Color allows colour (a terminal, NO_COLOR unset, TERM not "dumb").
	Color bool
	// Now is the clock the commands stamp messages with; nil is time.Now.
	Now func() time.Time
}

// Messages. Each carries the time it was made, on our clock.
type (
	// EventMsg is one event of /admin/events.
	EventMsg struct {
		Event adminapi.Event
		At    time.Time
	}
	// StatusMsg answers GET /admin/status.
	StatusMsg struct {
		Status *adminapi.Status
		Err    error
		At     time.Time
	}
	// ChannelsMsg answers GET /admin/channels.
	ChannelsMsg struct {
		Channels *adminapi.ChannelsResponse
		Err      error
		At       time.Time
	}
	// AccountsMsg answers GET /admin/accounts: the subscription accounts
	// the channels pane shows under their oauth channels.
	AccountsMsg struct {
		Accounts *adminapi.AccountsResponse
		Err      error
		At       time.Time
	}
	// ConnectedMsg ends a (re)connection attempt: the event stream and the
	// requests in flight at that moment, or the error.
	ConnectedMsg struct {
		Stream *adminapi.EventStream
		Active []adminapi.Event
		Err    error
		At     time.Time
	}
	// DisconnectedMsg says that Stream ended (the server went away).
	DisconnectedMsg struct {
		Stream *adminapi.EventStream
		Err    error
		At     time.Time
	}
	// TickMsg refreshes status and channels, once a second.
	TickMsg struct{ Time time.Time }
	// FrameMsg advances the spinner and the clocks on screen.
	FrameMsg struct{ Time time.Time }

	reconnectMsg struct{}
)

const (
	tickEvery = time.Second
	// accountsEvery spaces the accounts refreshes (their answer reads the
	// database and the day's request logs).
	accountsEvery = 5 * time.Second
	frameEvery    = 250 * time.Millisecond
	callTimeout   = 5 * time.Second
	maxBackoff    = 10 * time.Second
	// unreachableAfter is how long a lost server may stay away before the
	// panes give way to the "cannot reach" message.
	unreachableAfter = 10 * time.Second
	// rateWindow is the span requests/s, errors and tokens/s are over.
	rateWindow = time.Minute
	// maxHeld bounds the events kept while paused.
	maxHeld = 10000
)

// pane names the three panes, in tab order.
type pane int

const (
	paneActive pane = iota
	paneFinished
	paneChannels
	panes
)

// Model is the root model of `ccload top`.
type Model struct {
	src   Source
	now   func() time.Time
	keys  KeyMap
	st    Styles
	width int
	high  int

	clock time.Time // the latest time a message brought
	frame int

	active   ActivePane
	finished FinishedPane
	channels ChannelsPane
	focus    pane

	status    *adminapi.Status
	statusAt  time.Time
	statusErr error
	chanErr   error
	fetching  bool // a status+channels refresh is under way
	// accountsAt is when accounts were last asked for: every
	// accountsEvery, as the answer reads the database.
	accountsAt time.Time

	conn connection
	rate rates

	paused     bool
	pausedAt   time.Time
	held       []EventMsg
	heldLost   int
	help       bool
	filter     string
	filtering  bool
	filterEdit string
}

// connection is the state of the event stream.
type connection struct {
	stream    *adminapi.EventStream
	up        bool      // the stream is open
	ever      bool      // it was open once
	err       error     // why the last attempt failed or the stream ended
	downSince time.Time // when it went down (or the first attempt)
	attempt   int       // failed attempts since it was last up
	nextTry   time.Time
}

// New returns the model; Init starts connecting.
func New(src Source, opts Options) *Model {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	return &Model{src: src, now: now, keys: DefaultKeys, st: NewStyles(opts.Color),
		active: newActivePane()}
}

// Run shows the view until the user quits or ctx ends.
func Run(ctx context.Context, src Source, opts Options) error {
	m := New(src, opts)
	final, err := tea.NewProgram(m, tea.WithContext(ctx)).Run()
	if fm, ok := final.(*Model); ok && fm.conn.stream != nil {
		fm.conn.stream.Close()
	}
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil
	}
	return err
}

// Init connects and starts the clocks.
func (m *Model) Init() tea.Cmd {
	m.fetching = true
	return tea.Batch(m.connect(), m.refresh(), m.tick(), m.nextFrame())
}

// Update routes each message to what it changes.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.high = msg.Width, msg.Height
	case tea.KeyPressMsg:
		return m, m.onKey(msg)
	case EventMsg:
		m.advance(msg.At)
		if m.paused {
			m.hold(msg)
		} else {
			m.apply(msg)
		}
		return m, m.waitForEvent(m.conn.stream)
	case ConnectedMsg:
		return m, m.onConnected(msg)
	case DisconnectedMsg:
		return m, m.onDisconnected(msg)
	case reconnectMsg:
		return m, m.connect()
	case StatusMsg:
		m.advance(msg.At)
		m.fetching = false
		m.statusErr = msg.Err
		switch {
		case msg.Err != nil:
			m.status = nil // stale uptime and in-flight would mislead
		case !m.paused:
			m.status, m.statusAt = msg.Status, msg.At
		}
	case ChannelsMsg:
		m.advance(msg.At)
		m.chanErr = msg.Err
		if msg.Err == nil && !m.paused {
			m.channels.set(msg.Channels, msg.At)
		}
	case AccountsMsg:
		m.advance(msg.At)
		if !m.paused {
			// An error (or a server without the route) hides the accounts
			// rather than showing stale states.
			var list []adminapi.Account
			if msg.Err == nil && msg.Accounts != nil {
				list = msg.Accounts.Accounts
			}
			m.channels.setAccounts(list, msg.At)
		}
	case TickMsg:
		m.advance(msg.Time)
		var refresh tea.Cmd
		if !m.paused {
			m.rate.prune(msg.Time) // paused: the header's rates stay as they were
		}
		if !m.paused && !m.fetching {
			m.fetching = true
			refresh = m.refresh()
		}
		return m, tea.Batch(refresh, m.tick())
	case FrameMsg:
		m.advance(msg.Time)
		if !m.paused {
			m.frame++
		}
		return m, m.nextFrame()
	}
	return m, nil
}

// advance moves the model's clock forward (messages may arrive out of
// order; the clock never goes back).
func (m *Model) advance(t time.Time) {
	if t.After(m.clock) {
		m.clock = t
	}
}

// viewTime is the time the panes are drawn at: frozen while paused.
func (m *Model) viewTime() time.Time {
	if m.paused {
		return m.pausedAt
	}
	return m.clock
}

func (m *Model) apply(msg EventMsg) {
	if done, ok := m.active.apply(msg.Event, msg.At); ok {
		m.finished.add(done)
		m.rate.add(done.ev, msg.At)
	}
}

func (m *Model) hold(msg EventMsg) {
	if len(m.held) >= maxHeld {
		m.heldLost++
		return
	}
	m.held = append(m.held, msg)
}

func (m *Model) onConnected(msg ConnectedMsg) tea.Cmd {
	m.advance(msg.At)
	if msg.Err != nil {
		m.conn.err = msg.Err
		if m.conn.downSince.IsZero() {
			m.conn.downSince = msg.At
		}
		return m.retry(msg.At)
	}
	m.conn = connection{stream: msg.Stream, up: true, ever: true}
	m.active.reset(msg.Active, msg.At)
	if m.rate.since.IsZero() {
		m.rate.since = msg.At
	}
	var refresh tea.Cmd
	if !m.fetching {
		m.fetching = true
		refresh = m.refresh()
	}
	return tea.Batch(m.waitForEvent(msg.Stream), refresh)
}

func (m *Model) onDisconnected(msg DisconnectedMsg) tea.Cmd {
	if msg.Stream != m.conn.stream {
		return nil // an old stream's goodbye
	}
	m.advance(msg.At)
	m.conn.stream, m.conn.up = nil, false
	m.conn.err = msg.Err
	m.conn.downSince, m.conn.attempt = msg.At, 0
	return m.retry(msg.At)
}

// retry schedules the next connection attempt with exponential backoff:
// 0.5 s, 1 s, 2 s … at most 10 s.
func (m *Model) retry(now time.Time) tea.Cmd {
	d := min(500*time.Millisecond<<min(m.conn.attempt, 6), maxBackoff)
	m.conn.attempt++
	m.conn.nextTry = now.Add(d)
	return tea.Tick(d, func(time.Time) tea.Msg { return reconnectMsg{} })
}

// unreachable reports whether the panes give way to the message: never
// connected yet, or gone for a while.
func (m *Model) unreachable() bool {
	c := m.conn
	if c.up || c.err == nil {
		return false
	}
	return !c.ever || m.clock.Sub(c.downSince) >= unreachableAfter
}

func (m *Model) onKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.keys
	if m.filtering {
		switch msg.String() {
		case "ctrl+c":
			return tea.Quit
		case "enter":
			m.filter, m.filtering = m.filterEdit, false
		case "esc":
			m.filtering = false
		case "backspace":
			if r := []rune(m.filterEdit); len(r) > 0 {
				m.filterEdit = string(r[:len(r)-1])
			}
		default:
			if t := msg.Key().Text; t != "" {
				m.filterEdit += t
			}
		}
		return nil
	}
	switch {
	case k.Quit.Matches(msg):
		return tea.Quit
	case k.Help.Matches(msg):
		m.help = !m.help
	case m.help && k.Clear.Matches(msg):
		m.help = false
	case k.Clear.Matches(msg):
		m.filter = ""
	case k.Sort.Matches(msg):
		switch m.focus {
		case paneActive:
			m.active.sort = (m.active.sort + 1) % activeSorts
		case paneFinished:
			m.finished.sort = (m.finished.sort + 1) % finishedSorts
		case paneChannels:
			m.channels.sort = (m.channels.sort + 1) % channelSorts
		}
	case k.Filter.Matches(msg):
		m.filtering, m.filterEdit = true, m.filter
	case k.Pause.Matches(msg):
		m.togglePause()
	case k.Tab.Matches(msg):
		if msg.String() == "shift+tab" {
			m.focus = (m.focus + panes - 1) % panes
		} else {
			m.focus = (m.focus + 1) % panes
		}
	}
	return nil
}

func (m *Model) togglePause() {
	if !m.paused {
		m.paused, m.pausedAt = true, m.clock
		return
	}
	m.paused = false
	for _, msg := range m.held {
		m.apply(msg)
	}
	m.held, m.heldLost = nil, 0
}

// Commands. Each does one call and turns its answer into a message.

func (m *Model) connect() tea.Cmd {
	src, now := m.src, m.now
	return func() tea.Msg {
		s, err := src.Events(context.Background())
		if err != nil {
			return ConnectedMsg{Err: err, At: now()}
		}
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		act, err := src.Active(ctx)
		if err != nil {
			s.Close()
			return ConnectedMsg{Err: err, At: now()}
		}
		return ConnectedMsg{Stream: s, Active: act.Active, At: now()}
	}
}

// waitForEvent reads one event; Update re-arms it after each.
func (m *Model) waitForEvent(s *adminapi.EventStream) tea.Cmd {
	if s == nil {
		return nil
	}
	now := m.now
	return func() tea.Msg {
		ev, ok := <-s.C
		if !ok {
			return DisconnectedMsg{Stream: s, Err: s.Err(), At: now()}
		}
		return EventMsg{Event: ev, At: now()}
	}
}

// refresh fetches status and channels.
func (m *Model) refresh() tea.Cmd {
	src, now := m.src, m.now
	var accounts tea.Cmd
	if t := now(); m.accountsAt.IsZero() || t.Sub(m.accountsAt) >= accountsEvery {
		m.accountsAt = t
		accounts = func() tea.Msg {
			ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
			defer cancel()
			a, err := src.Accounts(ctx)
			return AccountsMsg{Accounts: a, Err: err, At: now()}
		}
	}
	return tea.Batch(accounts,
		func() tea.Msg {
			ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
			defer cancel()
			st, err := src.Status(ctx)
			return StatusMsg{Status: st, Err: err, At: now()}
		},
		func() tea.Msg {
			ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
			defer cancel()
			ch, err := src.Channels(ctx)
			return ChannelsMsg{Channels: ch, Err: err, At: now()}
		})
}

func (m *Model) tick() tea.Cmd {
	return tea.Tick(tickEvery, func(t time.Time) tea.Msg { return TickMsg{Time: t} })
}

func (m *Model) nextFrame() tea.Cmd {
	return tea.Tick(frameEvery, func(t time.Time) tea.Msg { return FrameMsg{Time: t} })
}
