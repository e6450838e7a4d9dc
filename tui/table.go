package tui

import (
	"github.com/ccload/ccload/internal/termtext"

	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// column is one column of a pane's table.
type column struct {
	title string
	width int  // preferred width; the flexible column takes what is left
	right bool // right-aligned (numbers)
	flex  bool // grows into spare width (at most one per table)
	drop  int  // 0 never dropped; higher numbers are dropped first when narrow
}

// cell is one rendered value and the style that reinforces it.
type cell struct {
	text  string
	style *lipgloss.Style
}

func plain(s string) cell { return cell{text: termtext.EscapeLines(s)} }

// layout decides which columns fit in width and how wide each is. It drops
// columns by falling drop rank until the fixed widths fit, then gives the
// flexible column the rest.
func layout(cols []column, width int) []column {
	keep := append([]column(nil), cols...)
	total := func(cs []column) int {
		n := 0
		for _, c := range cs {
			n += c.width + 1
		}
		return n - 1
	}
	for total(keep) > width {
		worst, at := 0, -1
		for i, c := range keep {
			if c.drop > worst {
				worst, at = c.drop, i
			}
		}
		if at < 0 {
			break // nothing left to drop: lines are truncated later
		}
		keep = append(keep[:at], keep[at+1:]...)
	}
	if spare := width - total(keep); spare > 0 {
		for i := range keep {
			if keep[i].flex {
				keep[i].width += spare
				break
			}
		}
	}
	return keep
}

// renderTable renders the header and rows of the kept columns; rows hold
// one cell per column of cols (before layout), matched by title.
func renderTable(st Styles, cols []column, rows [][]cell, width int) []string {
	kept := layout(cols, width)
	idx := make([]int, len(kept))
	for i, k := range kept {
		for j, c := range cols {
			if c.title == k.title {
				idx[i] = j
			}
		}
	}
	var hdr []string
	for _, c := range kept {
		hdr = append(hdr, align(c.title, c.width, c.right))
	}
	out := []string{fit(st.Header.Render(strings.TrimRight(strings.Join(hdr, " "), " ")), width)}
	for _, r := range rows {
		var parts []string
		for i, c := range kept {
			v := r[idx[i]]
			s := align(v.text, c.width, c.right)
			if v.style != nil {
				s = v.style.Render(s)
			}
			parts = append(parts, s)
		}
		out = append(out, fit(strings.TrimRight(strings.Join(parts, " "), " "), width))
	}
	return out
}

// align truncates s to w cells and pads it.
func align(s string, w int, right bool) string {
	s = ansi.Truncate(s, w, "…")
	if right {
		return padLeft(s, w)
	}
	return padRight(s, w)
}

func padRight(s string, w int) string {
	if n := ansi.StringWidth(s); n < w {
		return s + strings.Repeat(" ", w-n)
	}
	return s
}

func padLeft(s string, w int) string {
	if n := ansi.StringWidth(s); n < w {
		return strings.Repeat(" ", w-n) + s
	}
	return s
}

// fit cuts a line to width cells so that nothing ever wraps.
func fit(s string, width int) string {
	if width <= 0 {
		return ""
	}
	return ansi.Truncate(s, width, "…")
}
