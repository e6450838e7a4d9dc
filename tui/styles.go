package tui

import "charm.land/lipgloss/v2"

// Styles are the looks of the view. Colour only reinforces what the text
// already says (every coloured cell also carries a word or mark), so the
// plain Styles of NewStyles(false) lose no meaning.
type Styles struct {
	Title   lipgloss.Style // the top line
	Pane    lipgloss.Style // a pane's title
	Focus   lipgloss.Style // the focused pane's title
	Header  lipgloss.Style // column headers
	Dim     lipgloss.Style // stale data, hints
	OK      lipgloss.Style // success marks, "ok" states
	Warn    lipgloss.Style // degraded, paused, cooling components
	Err     lipgloss.Style // failures, "cooling" channels
	Key     lipgloss.Style // key names in the help
	Message lipgloss.Style // the unreachable-server box
}

// NewStyles returns coloured styles, or styles that add no escape codes at
// all when color is false (NO_COLOR, TERM=dumb, tests).
func NewStyles(color bool) Styles {
	if !color {
		p := lipgloss.NewStyle()
		return Styles{Title: p, Pane: p, Focus: p, Header: p, Dim: p, OK: p, Warn: p, Err: p, Key: p, Message: p}
	}
	return Styles{
		Title:   lipgloss.NewStyle().Bold(true),
		Pane:    lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("7")),
		Focus:   lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("14")),
		Header:  lipgloss.NewStyle().Foreground(lipgloss.Color("8")),
		Dim:     lipgloss.NewStyle().Foreground(lipgloss.Color("8")),
		OK:      lipgloss.NewStyle().Foreground(lipgloss.Color("2")),
		Warn:    lipgloss.NewStyle().Foreground(lipgloss.Color("3")),
		Err:     lipgloss.NewStyle().Foreground(lipgloss.Color("1")),
		Key:     lipgloss.NewStyle().Bold(true),
		Message: lipgloss.NewStyle().Foreground(lipgloss.Color("3")),
	}
}
