package cmd

import (
	"github.com/ccload/ccload/internal/termtext"

	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// maxWidth is what human output fits in (design §3).
const maxWidth = 100

// Colours of human output. Meaning is never carried by colour alone: the
// text says it too.
const (
	colorNone   = ""
	colorGreen  = "32"
	colorYellow = "33"
	colorRed    = "31"
	colorDim    = "2"
)

// cell is one table cell and its colour.
type cell struct {
	text  string
	color string
}

func plain(s string) cell { return cell{text: termtext.EscapeLines(s)} }

// table prints rows for people and scripts (STYLE practice 17): on a
// terminal an aligned table with a header, fitting maxWidth columns by
// shrinking the widest columns (cut text ends in "..."), where a cell may
// hold several lines; otherwise one line per row, fields separated by
// tabs (a cell's lines joined by ", "), no header.
type table struct {
	header []string
	rows   [][]cell
}

func newTable(header ...string) *table { return &table{header: header} }

func (t *table) add(cells ...cell) { t.rows = append(t.rows, cells) }

func (t *table) print(w io.Writer, tty, color bool) error {
	if !tty {
		for _, r := range t.rows {
			fields := make([]string, len(r))
			for i, c := range r {
				fields[i] = strings.NewReplacer("\t", " ", "\n", ", ", "\r", " ").Replace(c.text)
			}
			if _, err := fmt.Fprintln(w, strings.Join(fields, "\t")); err != nil {
				return err
			}
		}
		return nil
	}
	widths := t.widths()
	var b strings.Builder
	line := func(cells []cell, colorize bool) {
		b.Reset()
		for i, c := range cells {
			if i > 0 {
				b.WriteString("  ")
			}
			s := fit(c.text, widths[i])
			pad := widths[i] - utf8.RuneCountInString(s)
			if colorize && c.color != "" {
				s = "\x1b[" + c.color + "m" + s + "\x1b[0m"
			}
			b.WriteString(s)
			if i < len(cells)-1 {
				b.WriteString(strings.Repeat(" ", pad))
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	head := make([]cell, len(t.header))
	for i, h := range t.header {
		head[i] = cell{text: h, color: colorDim}
	}
	line(head, color)
	for _, r := range t.rows {
		height := 1
		for _, c := range r {
			height = max(height, strings.Count(c.text, "\n")+1)
		}
		for l := range height {
			cells := make([]cell, len(r))
			for i, c := range r {
				if parts := strings.Split(c.text, "\n"); l < len(parts) {
					cells[i] = cell{text: parts[l], color: c.color}
				}
			}
			line(cells, color)
		}
	}
	return nil
}

// widths sizes each column to its content, then shrinks the widest until
// the table fits maxWidth.
func (t *table) widths() []int {
	n := len(t.header)
	w, floor := make([]int, n), make([]int, n)
	for i, h := range t.header {
		w[i] = utf8.RuneCountInString(h)
		floor[i] = max(min(w[i], 6), 3)
	}
	for _, r := range t.rows {
		for i, c := range r {
			for _, l := range strings.Split(c.text, "\n") {
				if i < n {
					w[i] = max(w[i], utf8.RuneCountInString(l))
				}
			}
		}
	}
	for i := range w {
		floor[i] = min(floor[i], w[i])
	}
	total := 2 * (n - 1)
	for _, x := range w {
		total += x
	}
	for total > maxWidth {
		widest := -1
		for i := range w {
			if w[i] > floor[i] && (widest < 0 || w[i] > w[widest]) {
				widest = i
			}
		}
		if widest < 0 {
			break
		}
		w[widest]--
		total--
	}
	return w
}

// fit cuts s to w runes, marking the cut with "...".
func fit(s string, w int) string {
	if utf8.RuneCountInString(s) <= w {
		return s
	}
	r := []rune(s)
	if w <= 3 {
		return string(r[:w])
	}
	return string(r[:w-3]) + "..."
}

// pad fits s in exactly w runes (for fixed-width rows).
func pad(s string, w int) string {
	s = fit(s, w)
	return s + strings.Repeat(" ", w-utf8.RuneCountInString(s))
}

// paint colours s when color is on.
func paint(s, code string, color bool) string {
	if !color || code == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// Human formats of numbers and times.

func fmtCost(usd float64) string {
	switch {
	case usd == 0:
		return "$0"
	case usd < 1:
		return fmt.Sprintf("$%.4f", usd)
	default:
		return fmt.Sprintf("$%.2f", usd)
	}
}

func fmtCount(n int64) string {
	switch {
	case n < 100_000:
		return strconv.FormatInt(n, 10)
	case n < 10_000_000:
		return strconv.FormatInt(n/1000, 10) + "k"
	default:
		return strconv.FormatInt(n/1_000_000, 10) + "M"
	}
}

func fmtMs(ms int64) string {
	switch {
	case ms < 1000:
		return strconv.FormatInt(ms, 10) + "ms"
	case ms < 60_000:
		return strconv.FormatFloat(float64(ms)/1000, 'f', 1, 64) + "s"
	default:
		return fmtLeft((ms + 999) / 1000)
	}
}

// fmtLeft shows a number of seconds as "45s", "4m12s", "2h05m", "3d04h".
func fmtLeft(s int64) string {
	d := time.Duration(s) * time.Second
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", s)
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%02dm", s/3600, s%3600/60)
	default:
		return fmt.Sprintf("%dd%02dh", s/86400, s%86400/3600)
	}
}

// fmtUSD is the machine form of an amount: plain decimal, rounded to 1e-10
// USD so that float sums do not print as 0.0008261999999999999.
func fmtUSD(usd float64) string {
	return strconv.FormatFloat(math.Round(usd*1e10)/1e10, 'f', -1, 64)
}
