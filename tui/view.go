package tui

import (
	"github.com/ccload/ccload/internal/termtext"

	"errors"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/ccload/ccload/admin/adminapi"
)

// Size before the terminal tells us its own.
const defaultWidth, defaultHeight = 80, 24

// rates sums the requests that ended in the last rateWindow.
type rates struct {
	since time.Time // first connection: the window is shorter before since+rateWindow
	ends  []endSample
}

type endSample struct {
	at     time.Time
	tokens int64
	failed bool
}

func (r *rates) add(ev adminapi.Event, at time.Time) {
	r.ends = append(r.ends, endSample{at: at, tokens: ev.OutputTokens, failed: failed(ev)})
}

func (r *rates) prune(now time.Time) {
	i := 0
	for i < len(r.ends) && now.Sub(r.ends[i].at) > rateWindow {
		i++
	}
	r.ends = r.ends[i:]
}

// line is "req/s 2.40  errors 4.2%  out tok/s 512".
func (r *rates) line(now time.Time) string {
	if r.since.IsZero() {
		return "req/s -  errors -  out tok/s -"
	}
	win := min(max(now.Sub(r.since), time.Second), rateWindow)
	var n, bad int
	var tok int64
	for _, e := range r.ends {
		if now.Sub(e.at) <= win {
			n++
			tok += e.tokens
			if e.failed {
				bad++
			}
		}
	}
	errs := "0%"
	if n > 0 {
		errs = fmt.Sprintf("%.1f%%", 100*float64(bad)/float64(n))
	}
	return fmt.Sprintf("req/s %.2f  errors %s  out tok/s %.0f", float64(n)/win.Seconds(), errs, float64(tok)/win.Seconds())
}

// View composes the header, the panes (or the help, or the unreachable
// message) and the footer; every line is cut to the width.
func (m *Model) View() tea.View {
	v := tea.NewView(m.Render())
	v.AltScreen = true
	v.WindowTitle = "ccload top"
	return v
}

// Render is the screen as text (what View shows).
func (m *Model) Render() string {
	w, h := m.width, m.high
	if w <= 0 {
		w = defaultWidth
	}
	if h <= 0 {
		h = defaultHeight
	}
	head := m.header(w)
	foot := []string{fit(m.footer(), w)}
	bodyH := max(h-len(head)-len(foot), 0)
	var body []string
	switch {
	case m.help:
		body = m.keys.full(m.st)
	case m.unreachable():
		body = m.unreachableMessage(w)
	default:
		body = m.panes(w, bodyH)
	}
	if len(body) > bodyH {
		body = body[:bodyH]
	}
	for i := range body {
		body[i] = fit(body[i], w)
	}
	for len(body) < bodyH {
		body = append(body, "")
	}
	return strings.Join(append(append(head, body...), foot...), "\n")
}

func (m *Model) header(w int) []string {
	now := m.viewTime()
	st := m.st
	var state string
	switch c := m.conn; {
	case m.paused:
		state = st.Warn.Render(fmt.Sprintf("[PAUSED, %d events held]", len(m.held)+m.heldLost))
	case c.up:
		state = st.OK.Render("[live]")
	case !c.ever && c.err == nil:
		state = st.Dim.Render("[connecting…]")
	default:
		state = st.Warn.Render(fmt.Sprintf("[reconnecting… next try in %s]", countdown(c.nextTry.Sub(m.clock))))
	}
	// The state comes first so a narrow terminal still shows it.
	first := st.Title.Render("ccload top") + "  " + state
	if s := m.status; s != nil {
		up := time.Duration(s.UptimeSeconds)*time.Second + now.Sub(m.statusAt)
		first += fmt.Sprintf("  up %s  in flight %d", dur(up.Truncate(time.Second)), s.InFlight)
		if s.EventsDropped > 0 {
			first += fmt.Sprintf("  events lost %d", s.EventsDropped)
		}
	}
	first += "  " + m.src.BaseURL()

	second := m.rate.line(now) + "  cost today "
	if m.channels.resp != nil {
		second += fmt.Sprintf("$%.4f", m.channels.costToday())
	} else {
		second += "-"
	}

	var third string
	switch s := m.status; {
	case m.statusErr != nil && s == nil && m.unreachable():
		third = st.Dim.Render("config: unknown (server not reachable)")
	case m.statusErr != nil && s == nil:
		third = st.Err.Render("status: " + oneLine(m.statusErr))
	case s == nil:
		third = st.Dim.Render("config: -")
	case s.Config.Error != "":
		third = st.Err.Render("config RELOAD FAILED, previous config serving: " + oneLine(errors.New(s.Config.Error)))
	default:
		third = st.OK.Render("config ok") + fmt.Sprintf("  %s  loaded %s ago  reloads %d",
			s.Config.File, dur(now.Sub(s.Config.LoadedAt).Truncate(time.Second)), s.Config.Reloads)
	}
	return []string{fit(first, w), fit(second, w), fit(third, w)}
}

// oneLine is an error's text with its lines joined by " | ".
func oneLine(err error) string {
	return termtext.Escape(strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", " | ")), " "))
}

func (m *Model) footer() string {
	if m.filtering {
		return "filter (channel or model): " + m.filterEdit + "_   enter apply  esc cancel"
	}
	s := m.keys.short(m.st)
	if m.filter != "" {
		s = "filter: " + m.filter + " (esc clears)  " + s
	}
	return s
}

// panes gives each pane a third of the rows, capped at what it needs, and
// the rest to the focused pane first.
func (m *Model) panes(w, h int) []string {
	now := m.viewTime()
	views := [panes]func(paneView) []string{
		func(v paneView) []string { return m.active.view(m.st, v) },
		func(v paneView) []string { return m.finished.view(m.st, v) },
		func(v paneView) []string { return m.channels.view(m.st, v) },
	}
	pv := func(p pane, height int) paneView {
		return paneView{width: w, height: height, focused: m.focus == p, filter: m.filter, now: now, frame: m.frame}
	}
	var need [panes]int
	for p := range panes {
		need[p] = len(views[p](pv(p, 1<<20)))
	}
	var alloc [panes]int
	left := h
	for p := range panes {
		alloc[p] = min(need[p], h/int(panes))
		left -= alloc[p]
	}
	for _, p := range []pane{m.focus, (m.focus + 1) % panes, (m.focus + 2) % panes} {
		more := min(need[p]-alloc[p], left)
		alloc[p] += more
		left -= more
	}
	var out []string
	for p := range panes {
		out = append(out, views[p](pv(p, alloc[p]))...)
	}
	return out
}

// unreachableMessage replaces the panes while the server cannot be reached.
func (m *Model) unreachableMessage(w int) []string {
	st := m.st
	c := m.conn
	title := "Cannot reach ccload at " + m.src.BaseURL()
	// NotRunningError already says how to start the server or point at it;
	// APIError how to pass the password.
	var api *adminapi.APIError
	if errors.As(c.err, &api) {
		title = "The admin API at " + m.src.BaseURL() + " refused top"
	}
	out := []string{"", "  " + st.Message.Render(title), ""}
	for _, l := range strings.Split(lipgloss.Wrap(oneLine(c.err), max(w-4, 20), " "), "\n") {
		out = append(out, "  "+strings.TrimRight(l, " "))
	}
	out = append(out, "", fmt.Sprintf("  Retrying in %s (attempt %d). q quits.", countdown(c.nextTry.Sub(m.clock)), c.attempt))
	return out
}
