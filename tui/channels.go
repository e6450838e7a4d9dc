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

// channelSort orders the channels pane.
type channelSort int

const (
	byFileOrder channelSort = iota
	byCost
	byErrors
	byName
	channelSorts
)

func (s channelSort) String() string { return [...]string{"file order", "cost", "errors", "name"}[s] }

// ChannelsPane shows /admin/channels. Cooldowns count down on our clock
// between refreshes: seconds_left minus the time since the answer came.
type ChannelsPane struct {
	resp *adminapi.ChannelsResponse
	at   time.Time // when resp arrived
	sort channelSort
	// accounts are the subscription accounts by channel (AccountsMsg).
	accounts   map[string][]adminapi.Account
	accountsAt time.Time
}

func (p *ChannelsPane) set(r *adminapi.ChannelsResponse, at time.Time) { p.resp, p.at = r, at }

// costToday sums today's cost over the channels.
func (p *ChannelsPane) costToday() float64 {
	var c float64
	if p.resp != nil {
		for _, ch := range p.resp.Channels {
			c += ch.Today.Cost
		}
	}
	return c
}

func (p *ChannelsPane) rows(filter string) []adminapi.Channel {
	if p.resp == nil {
		return nil
	}
	var out []adminapi.Channel
	for _, ch := range p.resp.Channels {
		names := []string{ch.Name}
		for _, m := range ch.Models {
			names = append(names, m.Name)
		}
		if matches(filter, names...) {
			out = append(out, ch)
		}
	}
	slices.SortStableFunc(out, func(a, b adminapi.Channel) int {
		switch p.sort {
		case byCost:
			return cmp.Compare(b.Today.Cost, a.Today.Cost)
		case byErrors:
			return cmp.Compare(b.Today.Errors, a.Today.Errors)
		case byName:
			return cmp.Compare(a.Name, b.Name)
		}
		return 0
	})
	return out
}

var channelCols = []column{
	{title: "CHANNEL", width: 16},
	{title: "STATE", width: 8},
	{title: "INFL", width: 4, right: true, drop: 3},
	{title: "RPM", width: 4, right: true, drop: 2},
	{title: "REQ", width: 6, right: true, drop: 4},
	{title: "ERR", width: 5, right: true, drop: 1},
	{title: "COST", width: 8, right: true, drop: 5},
	{title: "CACHE", width: 5, right: true, drop: 6},
	{title: "COOLDOWNS", width: 20, flex: true},
}

func (p *ChannelsPane) view(st Styles, v paneView) []string {
	rows := p.rows(v.filter)
	title := fmt.Sprintf("Channels (%d)  sort: %s", len(rows), p.sort)
	var cells [][]cell
	for _, ch := range rows {
		state := cell{text: ch.State}
		switch ch.State {
		case "ok":
			state.style = &st.OK
		case "degraded", "paused":
			state.style = &st.Warn
		case "cooling":
			state.style = &st.Err
		default:
			state.style = &st.Dim
		}
		errs := plain(strconv.FormatInt(ch.Today.Errors, 10))
		if ch.Today.Errors > 0 {
			errs.style = &st.Err
		}
		cd := plain(p.cooldowns(ch.Cooldowns, v.now))
		if len(ch.Cooldowns) > 0 {
			cd.style = &st.Warn
		}
		cells = append(cells, []cell{
			plain(ch.Name), state, plain(strconv.FormatInt(ch.InFlight, 10)), plain(strconv.Itoa(ch.RPM)),
			plain(strconv.FormatInt(ch.Today.Requests, 10)), errs, plain(fmt.Sprintf("$%.4f", ch.Today.Cost)), cacheRate(ch.Today), cd,
		})
		cells = append(cells, p.accountRows(st, ch.Name, v.now)...)
	}
	empty := "no channels yet"
	if p.resp != nil {
		empty = "no channel matches"
	}
	return paneLines(st, v, title, channelCols, cells, empty)
}

// cooldowns lists what cools and the time left at now, soonest first:
// "key sk-a…f3c9#1a2b 42s, model claude-x 10s".
func (p *ChannelsPane) cooldowns(cds []adminapi.Cooldown, now time.Time) string {
	if len(cds) == 0 {
		return "-"
	}
	gone := now.Sub(p.at)
	if gone < 0 {
		gone = 0
	}
	type item struct {
		what string
		left time.Duration
	}
	var items []item
	for _, c := range cds {
		left := time.Duration(c.SecondsLeft)*time.Second - gone
		what := c.Scope
		switch c.Scope {
		case "key":
			what += " " + c.Key
		case "model":
			what += " " + c.Model
		case "url":
			what += " " + c.URL
		}
		items = append(items, item{what, left})
	}
	slices.SortStableFunc(items, func(a, b item) int { return cmp.Compare(a.left, b.left) })
	var parts []string
	for _, it := range items {
		left := "ending"
		if it.left > 0 {
			left = countdown(it.left)
		}
		parts = append(parts, it.what+" "+left)
	}
	return strings.Join(parts, ", ")
}

// countdown is a time left in whole seconds, rounded up: "42s", "4m05s".
func countdown(d time.Duration) string {
	s := int64((d + time.Second - 1) / time.Second)
	switch {
	case s < 60:
		return strconv.FormatInt(s, 10) + "s"
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	default:
		return fmt.Sprintf("%dh%02dm", s/3600, s%3600/60)
	}
}

// cacheRate is today's prompt cache hit rate (cache-read tokens over input
// tokens) as a percentage, "-" before any input.
func cacheRate(u adminapi.Usage) cell {
	if u.InputTokens == 0 {
		return plain("-")
	}
	return plain(fmt.Sprintf("%.0f%%", u.CacheHitRate*100))
}
