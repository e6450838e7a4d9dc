package tui

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ccload/ccload/admin/adminapi"
)

// tracked is a request as the view knows it: its latest event and when
// that event reached us (elapsed time counts on from there, on our clock,
// so the server's clock never matters).
type tracked struct {
	ev adminapi.Event
	at time.Time
}

// elapsed is the request's age at now.
func (t tracked) elapsed(now time.Time) time.Duration {
	d := time.Duration(t.ev.ElapsedMs) * time.Millisecond
	if t.ev.Type != "end" && now.After(t.at) {
		d += now.Sub(t.at)
	}
	return d
}

// activeSort orders the active requests.
type activeSort int

const (
	byElapsed activeSort = iota // oldest first
	byTokens                    // most output tokens first
	byModel
	byChannel
	activeSorts
)

func (s activeSort) String() string {
	return [...]string{"elapsed", "tokens", "model", "channel"}[s]
}

// ActivePane is the table of requests in flight, fed by start, first_byte
// and progress events and emptied by end events.
type ActivePane struct {
	reqs map[uint64]tracked
	sort activeSort
}

func newActivePane() ActivePane { return ActivePane{reqs: map[uint64]tracked{}} }

// reset replaces the requests with a snapshot of /admin/active (after a
// (re)connect: ids restart with the server, so old rows are gone).
func (p *ActivePane) reset(evs []adminapi.Event, at time.Time) {
	p.reqs = map[uint64]tracked{}
	for _, ev := range evs {
		p.reqs[ev.ID] = tracked{ev: ev, at: at}
	}
}

// apply folds one event in. An end event removes the request and is
// returned with ok true, for the finished pane.
func (p *ActivePane) apply(ev adminapi.Event, at time.Time) (done tracked, ok bool) {
	if ev.Type == "end" {
		delete(p.reqs, ev.ID)
		return tracked{ev: ev, at: at}, true
	}
	old, seen := p.reqs[ev.ID]
	if seen {
		// A progress event may lack what an earlier one said.
		ev.TTFBMs = cmp.Or(ev.TTFBMs, old.ev.TTFBMs)
		ev.Channel = cmp.Or(ev.Channel, old.ev.Channel)
		ev.UpstreamProtocol = cmp.Or(ev.UpstreamProtocol, old.ev.UpstreamProtocol)
		ev.URLHost = cmp.Or(ev.URLHost, old.ev.URLHost)
		ev.OutputTokens = max(ev.OutputTokens, old.ev.OutputTokens)
	}
	p.reqs[ev.ID] = tracked{ev: ev, at: at}
	return tracked{}, false
}

// rows lists the requests that match filter, in the pane's order.
func (p *ActivePane) rows(filter string, now time.Time) []tracked {
	var out []tracked
	for _, t := range p.reqs {
		if matches(filter, t.ev.Channel, t.ev.Model) {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b tracked) int {
		var c int
		switch p.sort {
		case byElapsed:
			c = cmp.Compare(b.elapsed(now), a.elapsed(now))
		case byTokens:
			c = cmp.Compare(b.ev.OutputTokens, a.ev.OutputTokens)
		case byModel:
			c = cmp.Compare(a.ev.Model, b.ev.Model)
		case byChannel:
			c = cmp.Compare(a.ev.Channel, b.ev.Channel)
		}
		return cmp.Or(c, cmp.Compare(a.ev.ID, b.ev.ID))
	})
	return out
}

var activeCols = []column{
	{title: " ", width: 1},
	{title: "TOKEN", width: 10, drop: 3},
	{title: "PROTOCOL", width: 20, drop: 4},
	{title: "MODEL", width: 18, flex: true},
	{title: "CHANNEL", width: 14, drop: 1},
	{title: "HOST", width: 18, drop: 5},
	{title: "ELAPSED", width: 7, right: true},
	{title: "TTFB", width: 6, right: true, drop: 2},
	{title: "OUT", width: 6, right: true},
}

// spinner frames: ASCII, so every terminal shows them.
var spinner = []string{"|", "/", "-", `\`}

// view renders at most height lines (title, header, rows).
func (p *ActivePane) view(st Styles, v paneView) []string {
	rows := p.rows(v.filter, v.now)
	title := fmt.Sprintf("Active requests (%d)  sort: %s", len(rows), p.sort)
	var cells [][]cell
	for _, t := range rows {
		ev := t.ev
		mark := " "
		if ev.Stream {
			mark = spinner[v.frame%len(spinner)]
			if ev.Type == "start" {
				mark = "." // waiting for the first byte
			}
		}
		cells = append(cells, []cell{
			plain(mark), plain(dash(ev.Token)), plain(protocols(ev)), plain(ev.Model),
			plain(dash(ev.Channel)), plain(dash(ev.URLHost)), plain(dur(t.elapsed(v.now))),
			plain(ms(ev.TTFBMs)), plain(count(ev.OutputTokens)),
		})
	}
	return paneLines(st, v, title, activeCols, cells, "no request in flight")
}

// finishedSort orders the finished requests.
type finishedSort int

const (
	byNewest finishedSort = iota
	byDuration
	byStatus
	finishedSorts
)

func (s finishedSort) String() string { return [...]string{"newest", "duration", "status"}[s] }

// finishedKeep is how many finished requests the pane remembers.
const finishedKeep = 200

// FinishedPane lists the latest finished requests, newest first.
type FinishedPane struct {
	reqs []tracked // newest last
	sort finishedSort
}

func (p *FinishedPane) add(t tracked) {
	p.reqs = append(p.reqs, t)
	if len(p.reqs) > finishedKeep {
		p.reqs = slices.Delete(p.reqs, 0, len(p.reqs)-finishedKeep)
	}
}

func (p *FinishedPane) rows(filter string) []tracked {
	var out []tracked
	for i := len(p.reqs) - 1; i >= 0; i-- {
		if t := p.reqs[i]; matches(filter, t.ev.Channel, t.ev.Model) {
			out = append(out, t)
		}
	}
	slices.SortStableFunc(out, func(a, b tracked) int {
		switch p.sort {
		case byDuration:
			return cmp.Compare(b.ev.ElapsedMs, a.ev.ElapsedMs)
		case byStatus: // failures first
			return cmp.Compare(b.ev.Status, a.ev.Status)
		}
		return 0
	})
	return out
}

var finishedCols = []column{
	{title: "RESULT", width: 6},
	{title: "CODE", width: 4, right: true},
	{title: "SCOPE", width: 7},
	{title: "AGO", width: 5, right: true, drop: 3},
	{title: "TOKEN", width: 10, drop: 4},
	{title: "PROTOCOL", width: 20, drop: 6},
	{title: "MODEL", width: 18, flex: true},
	{title: "CHANNEL", width: 14, drop: 1},
	{title: "DUR", width: 6, right: true},
	{title: "TTFB", width: 6, right: true, drop: 5},
	{title: "OUT", width: 6, right: true, drop: 2},
	{title: "ERROR", width: 16, drop: 7},
}

// failed reports whether a finished request failed.
func failed(ev adminapi.Event) bool { return ev.Status >= 400 || (ev.Status == 0 && ev.Error != "") }

func (p *FinishedPane) view(st Styles, v paneView) []string {
	rows := p.rows(v.filter)
	title := fmt.Sprintf("Finished (%d)  sort: %s", len(rows), p.sort)
	var cells [][]cell
	for _, t := range rows {
		ev := t.ev
		res, style := cell{text: "OK", style: &st.OK}, &st.Err
		if failed(ev) {
			res = cell{text: "FAIL", style: &st.Err}
		}
		scope := cell{text: dash(ev.FailureScope)}
		if ev.FailureScope != "" {
			scope.style = &st.Warn
		}
		code := cell{text: dash(statusText(ev.Status))}
		if failed(ev) {
			code.style = style
		}
		cells = append(cells, []cell{
			res, code, scope, plain(ago(v.now.Sub(t.at))), plain(dash(ev.Token)), plain(protocols(ev)),
			plain(ev.Model), plain(dash(ev.Channel)), plain(dur(time.Duration(ev.ElapsedMs) * time.Millisecond)),
			plain(ms(ev.TTFBMs)), plain(count(ev.OutputTokens)), plain(firstLine(ev.Error)),
		})
	}
	return paneLines(st, v, title, finishedCols, cells, "nothing finished yet")
}

// paneView is what every pane's view needs from the root model.
type paneView struct {
	width, height int
	focused       bool
	filter        string
	now           time.Time
	frame         int
}

// paneLines renders a pane: its title, then the table cut to height.
func paneLines(st Styles, v paneView, title string, cols []column, rows [][]cell, empty string) []string {
	if v.height <= 0 {
		return nil
	}
	ts, mark := st.Pane, "  "
	if v.focused {
		ts, mark = st.Focus, "> "
	}
	if v.filter != "" {
		title += "  filter: " + v.filter
	}
	out := []string{fit(ts.Render(mark+title), v.width)}
	if len(rows) == 0 {
		out = append(out, fit(st.Dim.Render("  ("+empty+")"), v.width))
	} else {
		tbl := renderTable(st, cols, rows, v.width)
		if max := v.height - 1; len(tbl) > max {
			if max >= 2 { // header, rows, "+N more"
				more := len(tbl) - max + 1
				tbl = append(tbl[:max-1], fit(st.Dim.Render(fmt.Sprintf("  … %d more", more)), v.width))
			} else {
				tbl = tbl[:max]
			}
		}
		out = append(out, tbl...)
	}
	if len(out) > v.height {
		out = out[:v.height]
	}
	return out
}

// matches is the filter: a case-insensitive substring of any field.
func matches(filter string, fields ...string) bool {
	if filter == "" {
		return true
	}
	f := strings.ToLower(filter)
	for _, s := range fields {
		if strings.Contains(strings.ToLower(s), f) {
			return true
		}
	}
	return false
}

func protocols(ev adminapi.Event) string {
	if ev.UpstreamProtocol == "" {
		return ev.ClientProtocol
	}
	return ev.ClientProtocol + "->" + ev.UpstreamProtocol
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func statusText(code int) string {
	if code == 0 {
		return ""
	}
	return strconv.Itoa(code)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// ms shows a millisecond count, "-" for 0 (not known yet).
func ms(n int64) string {
	if n <= 0 {
		return "-"
	}
	return dur(time.Duration(n) * time.Millisecond)
}

// dur is a short duration: "850ms", "4.2s", "1m05s", "2h03m".
func dur(d time.Duration) string {
	switch {
	case d < 0:
		d = 0
		fallthrough
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	case d < 10*time.Second:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Minute:
		return strconv.Itoa(int(d.Seconds())) + "s"
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	default:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
}

// count is a token count: "812", "12.3k", "1.2M".
func count(n int64) string {
	switch {
	case n <= 0:
		return "-"
	case n < 10000:
		return strconv.FormatInt(n, 10)
	case n < 1000000:
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	default:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	}
}

// ago is a whole age: "0s", "42s", "3m", "2h".
func ago(d time.Duration) string {
	switch {
	case d < time.Minute:
		return strconv.Itoa(max(int(d.Seconds()), 0)) + "s"
	case d < time.Hour:
		return strconv.Itoa(int(d.Minutes())) + "m"
	default:
		return strconv.Itoa(int(d.Hours())) + "h"
	}
}
