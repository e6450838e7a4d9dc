package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"
)

// Binding is one action and the keys that trigger it.
type Binding struct {
	Keys []string // as tea.KeyPressMsg.String() spells them
	Help string   // the key as shown, "s"
	Desc string   // what it does, "sort"
}

// Matches reports whether msg presses one of b's keys.
func (b Binding) Matches(msg tea.KeyPressMsg) bool {
	s := msg.String()
	for _, k := range b.Keys {
		if k == s {
			return true
		}
	}
	return false
}

// KeyMap is every key `ccload top` understands.
type KeyMap struct {
	Quit, Help, Sort, Filter, Pause, Tab, Clear Binding
}

// DefaultKeys are the keys of `ccload top`.
var DefaultKeys = KeyMap{
	Quit:   Binding{Keys: []string{"q", "ctrl+c"}, Help: "q", Desc: "quit"},
	Help:   Binding{Keys: []string{"?"}, Help: "?", Desc: "help"},
	Sort:   Binding{Keys: []string{"s"}, Help: "s", Desc: "sort"},
	Filter: Binding{Keys: []string{"/"}, Help: "/", Desc: "filter"},
	Pause:  Binding{Keys: []string{"p", "space"}, Help: "p", Desc: "pause"},
	Tab:    Binding{Keys: []string{"tab", "shift+tab"}, Help: "tab", Desc: "pane"},
	Clear:  Binding{Keys: []string{"esc"}, Help: "esc", Desc: "clear filter"},
}

// short is the one-line help of the footer.
func (k KeyMap) short(st Styles) string {
	var parts []string
	for _, b := range []Binding{k.Sort, k.Filter, k.Pause, k.Tab, k.Help, k.Quit} {
		parts = append(parts, st.Key.Render(b.Help)+" "+b.Desc)
	}
	return strings.Join(parts, "  ")
}

// full is the help screen: one line per key.
func (k KeyMap) full(st Styles) []string {
	rows := [][2]string{
		{"s", "sort the focused pane; it cycles through\n  active: elapsed, tokens, model, channel\n  finished: newest, duration, status\n  channels: file order, cost, errors, name"},
		{"/", "filter by channel or model (substring); enter applies, esc clears"},
		{"p", "pause: freeze the view; events are held and applied on resume"},
		{"tab", "focus the next pane (active, finished, channels); it gets the spare rows"},
		{"esc", "clear the filter, close this help"},
		{"?", "toggle this help"},
		{"q", "quit (also ctrl+c)"},
	}
	out := []string{st.Pane.Render("Keys"), ""}
	for _, r := range rows {
		for i, l := range strings.Split(r[1], "\n") {
			key := ""
			if i == 0 {
				key = r[0]
			}
			out = append(out, "  "+st.Key.Render(padRight(key, 5))+" "+l)
		}
	}
	out = append(out, "",
		"Active: a turning | / - \\ is a stream sending, . a stream waiting for its",
		"first byte. Finished: OK or FAIL, the status code and the failure scope",
		"(key, model, url, channel). Channel states: ok, degraded, cooling, paused,",
		"disabled. Colour only repeats what the text says.")
	return out
}
