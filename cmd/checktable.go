package cmd

import (
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ccload/ccload/engine"
)

// Columns of the check table that may shrink.
const (
	colChannel = 0
	colModel   = 1
	colURL     = 2
)

// printProbeTable is the terminal form of `ccload check`: one aligned row
// per probe within maxWidth columns; under a failed row, an indented line
// with the failure's scope/kind, HTTP status and the upstream's message,
// shortened (they do not fit beside eight columns). hosts[i] names the URL
// of results[i].
//
// When a row is too wide, in this order: URL shrinks to 16 columns, renamed
// models drop the part of the upstream name they share with the client name
// ("claude-opus-4-8 -> ...4-6"), CHANNEL shrinks to 12 with the cut in the
// middle (names often share a prefix) but never so far that two channels
// read the same, URL to 12, MODEL to 20, and then the widest of the three,
// down to 8.
func printProbeTable(w io.Writer, results []engine.ProbeResult, hosts []string, stream, color bool) error {
	head := []string{"CHANNEL", "MODEL", "URL", "KEY", "PROTO", "TTFB", "TOTAL", "RESULT"}
	if stream {
		head = slices.Insert(head, 5, "STREAM")
	}
	rows := make([][]string, len(results))
	short := make([]string, len(results)) // MODEL cells with renames compacted
	for i, r := range results {
		model := r.Model
		short[i] = model
		if r.Upstream != "" && r.Upstream != r.Model {
			model, short[i] = r.Model+" -> "+r.Upstream, r.Model+" -> "+shortUpstream(r.Model, r.Upstream)
		}
		ttfb := "-" // no response
		if r.Status != 0 {
			ttfb = fmtMs(r.TTFBMs)
		}
		result := "ok"
		if !r.OK {
			result = "FAIL"
		}
		row := []string{r.Channel, model, hosts[i], r.Key, string(r.Protocol), ttfb, fmtMs(r.TotalMs), result}
		if stream {
			row = slices.Insert(row, 5, map[bool]string{false: "no", true: "yes"}[r.Stream])
		}
		rows[i] = row
	}
	widths := columnWidths(head, rows)
	total := 2 * (len(head) - 1)
	for _, x := range widths {
		total += x
	}
	shrink := func(col, floor int) {
		if cut := min(total-maxWidth, widths[col]-floor); cut > 0 {
			widths[col] -= cut
			total -= cut
		}
	}
	shrink(colURL, 16)
	if total > maxWidth {
		for i := range rows {
			rows[i][colModel] = short[i]
		}
		natural := columnWidths(head, rows)[colModel]
		total -= widths[colModel] - natural
		widths[colModel] = natural
	}
	// A channel's name is its identity: never cut two names to one text.
	chFloor := distinctWidth(rows, colChannel, 12)
	shrink(colChannel, chFloor)
	shrink(colURL, 12)
	shrink(colModel, 20)
	for total > maxWidth {
		widest := -1
		for _, i := range []int{colChannel, colModel, colURL} {
			floor := 8
			if i == colChannel {
				floor = max(floor, chFloor)
			}
			if widths[i] > floor && (widest < 0 || widths[i] > widths[widest]) {
				widest = i
			}
		}
		if widest < 0 {
			break
		}
		widths[widest]--
		total--
	}

	var b strings.Builder
	line := func(cells []string, lastColor string) {
		for i, c := range cells {
			if i > 0 {
				b.WriteString("  ")
			}
			if i == colChannel {
				c = fitMiddle(c, widths[i])
			} else {
				c = fit(c, widths[i])
			}
			if i == len(cells)-1 {
				b.WriteString(paint(c, lastColor, color))
				break
			}
			b.WriteString(c + strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)))
		}
		b.WriteString("\n")
	}
	line(head, colorNone)
	for i, r := range results {
		if r.OK {
			line(rows[i], colorGreen)
			continue
		}
		line(rows[i], colorRed)
		b.WriteString("    " + fit(failureLine(r), maxWidth-4) + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func columnWidths(head []string, rows [][]string) []int {
	widths := make([]int, len(head))
	for _, r := range append([][]string{head}, rows...) {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	return widths
}

// failureLine is "scope/kind, HTTP status: message" with the message on
// one line and without the request line Go's HTTP client puts in front of
// a transport error (`Post "https://…": `): the table shows the URL, and
// the cause is at the end, where a cut would lose it.
func failureLine(r engine.ProbeResult) string {
	s := scopeName(r.Scope) + "/" + string(r.Kind)
	if r.Status != 0 {
		s += ", HTTP " + strconv.Itoa(r.Status)
	}
	msg := strings.NewReplacer("\t", " ", "\n", " ", "\r", " ").Replace(r.Message)
	if i := strings.Index(msg, `Post "`); i >= 0 {
		if j := strings.Index(msg[i+6:], `": `); j >= 0 {
			msg = msg[:i] + msg[i+6+j+3:]
		}
	}
	return s + ": " + msg
}

// shortUpstream returns up without the leading words it shares with name,
// keeping at least its last two: ("claude-opus-4-8", "claude-opus-4-6")
// gives "...4-6". It returns up when nothing is saved.
func shortUpstream(name, up string) string {
	n := 0
	for n < len(name) && n < len(up) && name[n] == up[n] {
		n++
	}
	const seps = "-._/:"
	cut := strings.LastIndexAny(up[:n], seps) // end of the last shared word
	if cut < 0 {
		return up
	}
	if prev := strings.LastIndexAny(up[:cut], seps); prev >= 0 {
		cut = prev // keep one shared word for context
	} else {
		return up
	}
	if cut+1 <= len("...") {
		return up
	}
	return "..." + up[cut+1:]
}

// distinctWidth is the smallest width, from floor up, at which fitMiddle
// keeps the distinct values of column col distinct.
func distinctWidth(rows [][]string, col, floor int) int {
	var vals []string
	natural := 0
	for _, r := range rows {
		if !slices.Contains(vals, r[col]) {
			vals = append(vals, r[col])
			natural = max(natural, utf8.RuneCountInString(r[col]))
		}
	}
	for w := floor; w < natural; w++ {
		seen := map[string]bool{}
		for _, v := range vals {
			seen[fitMiddle(v, w)] = true
		}
		if len(seen) == len(vals) {
			return w
		}
	}
	return max(floor, natural)
}

// fitMiddle cuts s to w runes with "..." in the middle, keeping both ends.
func fitMiddle(s string, w int) string {
	r := []rune(s)
	if len(r) <= w {
		return s
	}
	if w <= 5 {
		return fit(s, w)
	}
	head := (w - 3 + 1) / 2
	return string(r[:head]) + "..." + string(r[len(r)-(w-3-head):])
}
