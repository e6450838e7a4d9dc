package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ccload/ccload/admin/adminapi"
)

// ChannelsOptions are the flags of `ccload channels`.
type ChannelsOptions struct {
	IO     IOStreams
	Admin  AdminFlags
	Client func() (*adminapi.Client, error)
	JSON   bool
}

// NewCmdChannels builds `ccload channels`.
func NewCmdChannels(f *Factory, runF func(*ChannelsOptions) error) *cobra.Command {
	opts := &ChannelsOptions{IO: f.IO}
	opts.Client = f.adminClient(&opts.Admin)
	c := &cobra.Command{
		Use:   "channels [--json]",
		Short: "Show channels with live state: cooldowns, in-flight, RPM, today's usage",
		Long: `Show every channel of the running server with its live state.

STATE is ok, degraded (a key, model or URL cools), cooling (the whole
channel cools), paused (runtime override from the admin API) or disabled
(enabled: false in the file). REQ, ERR, COST and CACHE are today's (UTC),
from the usage aggregates; CACHE is the prompt cache hit rate (cache-read
tokens over input tokens). COOLDOWNS lists what cools and for how long,
the latest scheduled check, what protocol detection learned for URLs
without protocols ("detected openai->anthropic": Chat requests are sent
to that URL as Anthropic) and the models without a price.

On a terminal a block above the table lists the live instances on the
database (scale-out: every ccload serve sharing it, docs/scale-out.md);
* marks the one that answered. The channel table is that instance's view:
INFL and RPM count its own requests, REQ/ERR/COST are the whole cluster's.

Without a terminal the output is one tab-separated line per channel:
name, state, priority, weight, in_flight, rpm, requests_today,
errors_today, cost_today_usd, cache_hit_rate_today (0-1), cooldowns
(scope:what:seconds_left, then check:ok|check:fail:scope/kind,
detected:url:client:protocol|none and unpriced:model|model,
comma-separated).
--json prints the /admin/channels answer (admin/API.md), instances included.`,
		Example: `  ccload channels -c ccload.yaml
  ccload channels --server http://10.0.0.5:8080 --json | jq '.channels[].state'`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return channelsRun(c.Context(), opts)
		},
	}
	addAdminFlags(c, &opts.Admin)
	c.Flags().BoolVar(&opts.JSON, "json", false, "print JSON (stable, see admin/API.md)")
	return c
}

func channelsRun(ctx context.Context, opts *ChannelsOptions) error {
	cl, err := opts.Client()
	if err != nil {
		return err
	}
	resp, err := cl.Channels(ctx)
	if err != nil {
		return &exitError{code: exitFail, err: err}
	}
	if opts.JSON {
		return writeJSONOut(opts.IO, resp)
	}
	if opts.IO.IsTTY {
		if err := instancesTable(resp).print(opts.IO.Out, true, opts.IO.Color); err != nil {
			return err
		}
		fmt.Fprintln(opts.IO.Out)
	}
	t := newTable("NAME", "STATE", "PRI", "W", "INFL", "RPM", "REQ", "ERR", "COST", "CACHE", "COOLDOWNS")
	for _, c := range resp.Channels {
		t.add(plain(c.Name), cell{c.State, stateColor(c.State)},
			plain(strconv.Itoa(c.Priority)), plain(strconv.Itoa(c.Weight)),
			plain(strconv.FormatInt(c.InFlight, 10)), plain(strconv.Itoa(c.RPM)),
			plain(fmtCount(c.Today.Requests)), errCell(c.Today.Errors, opts.IO.IsTTY),
			costCell(c.Today.Cost, opts.IO.IsTTY), cacheCell(c.Today, opts.IO.IsTTY),
			plain(liveList(c, opts.IO.IsTTY)))
	}
	return t.print(opts.IO.Out, opts.IO.IsTTY, opts.IO.Color)
}

// instancesTable is the block above the channel table on a terminal: the
// live instances on the database. The channel table below is the answering
// instance's view (marked *): INFL and RPM count its own requests only.
func instancesTable(resp *adminapi.ChannelsResponse) *table {
	t := newTable("INSTANCE", "ADDRESS", "VERSION", "UP", "BEAT", "INFL")
	for _, in := range resp.Instances {
		id := in.ID
		if in.Self {
			id += " *"
		}
		t.add(plain(id), plain(in.Address), plain(in.Version),
			plain(fmtLeft(int64(resp.Time.Sub(in.StartedAt)/time.Second))),
			plain(fmtLeft(max(int64(resp.Time.Sub(in.LastHeartbeat)/time.Second), 0))+" ago"),
			plain(strconv.FormatInt(in.InFlight, 10)))
	}
	return t
}

func stateColor(s string) string {
	switch s {
	case "ok":
		return colorGreen
	case "degraded", "paused":
		return colorYellow
	case "cooling", "expired":
		return colorRed
	}
	return colorDim
}

func errCell(n int64, tty bool) cell {
	if !tty {
		return plain(strconv.FormatInt(n, 10))
	}
	c := plain(fmtCount(n))
	if n > 0 {
		c.color = colorRed
	}
	return c
}

func costCell(usd float64, tty bool) cell {
	if !tty {
		return plain(fmtUSD(usd))
	}
	return plain(fmtCost(usd))
}

// cacheCell is the CACHE cell: the hit rate as a percentage on a terminal
// ("-" without input), a 0-1 fraction for scripts.
func cacheCell(u adminapi.Usage, tty bool) cell {
	if !tty {
		return plain(strconv.FormatFloat(u.CacheHitRate, 'f', 3, 64))
	}
	if u.InputTokens == 0 {
		return plain("-")
	}
	return plain(strconv.FormatFloat(u.CacheHitRate*100, 'f', 0, 64) + "%")
}

// liveList is the COOLDOWNS cell: what cools, then the latest scheduled
// check when the channel has one ("check ok 120ms" / "check FAIL url/timeout"),
// then what protocol detection learned (detectNote),
// then the models without a price ("unpriced my-model, other" /
// "unpriced:my-model|other"), which cost 0 or are refused under cost limits.
func liveList(c adminapi.Channel, tty bool) string {
	out := joinLive(checkNote(c, tty), cooldownList(c.Cooldowns, tty), tty)
	out = joinLive(detectNote(c, tty), out, tty)
	if len(c.Unpriced) == 0 {
		return out
	}
	if tty {
		return joinLive("unpriced "+strings.Join(c.Unpriced, ", "), out, tty)
	}
	return joinLive("unpriced:"+strings.Join(c.Unpriced, "|"), out, tty)
}

// joinLive appends note to the cell out.
func joinLive(note, out string, tty bool) string {
	switch {
	case note == "":
		return out
	case out == "" || out == "-":
		return note
	case tty:
		return out + "\n" + note
	default:
		return out + ", " + note
	}
}

// detectNote is what protocol detection learned about the channel's URLs
// that declare no protocols: "detected openai->anthropic" per client
// family for people (the URL's host first when the channel has several
// URLs; "none" when no family answered); "detected:URL:openai:anthropic"
// for scripts. "" when nothing was learned.
func detectNote(c adminapi.Channel, tty bool) string {
	var parts []string
	for _, u := range c.URLs {
		for _, d := range u.Detected {
			p := d.Protocol
			if p == "" {
				p = "none"
			}
			switch {
			case !tty:
				parts = append(parts, "detected:"+u.URL+":"+d.Client+":"+p)
			case len(c.URLs) > 1:
				parts = append(parts, "detected "+urlHost(u.URL)+" "+d.Client+"->"+p)
			default:
				parts = append(parts, "detected "+d.Client+"->"+p)
			}
		}
	}
	if tty {
		return strings.Join(parts, "\n")
	}
	return strings.Join(parts, ", ")
}

// checkNote is the latest scheduled check, "" when there is none.
func checkNote(c adminapi.Channel, tty bool) string {
	lc := c.LastCheck
	if lc == nil {
		return ""
	}
	switch {
	case tty && lc.OK:
		return "check ok " + fmtMs(lc.TotalMs)
	case tty:
		return "check FAIL " + string(lc.Scope) + "/" + string(lc.Kind)
	case lc.OK:
		return "check:ok"
	default:
		return "check:fail:" + string(lc.Scope) + "/" + string(lc.Kind)
	}
}

// cooldownList shows what cools: one per line, "key sk-a…f3c9 4m12s", for
// people; "key:sk-a…f3c9#1a2b3c4d:252, model:opus:30" for scripts.
func cooldownList(cds []adminapi.Cooldown, tty bool) string {
	if len(cds) == 0 {
		if tty {
			return "-"
		}
		return ""
	}
	parts := make([]string, 0, len(cds))
	for _, cd := range cds {
		what := cd.Key + cd.Model + cd.URL
		if cd.Scope == "channel" {
			what = cd.Channel
		}
		if tty {
			what, _, _ = strings.Cut(what, "#") // the fingerprint says enough here
			if cd.URL != "" {
				what = urlHost(cd.URL)
			}
			if cd.Scope == "channel" {
				what = "" // the row says which
			}
			parts = append(parts, strings.TrimSpace(cd.Scope+" "+what)+" "+fmtLeft(cd.SecondsLeft))
		} else {
			parts = append(parts, cd.Scope+":"+what+":"+strconv.FormatInt(cd.SecondsLeft, 10))
		}
	}
	return strings.Join(parts, "\n")
}

func urlHost(u string) string {
	_, rest, ok := strings.Cut(u, "://")
	if !ok {
		return u
	}
	host, _, _ := strings.Cut(rest, "/")
	return host
}

// writeJSONOut prints v indented, for --json.
func writeJSONOut(io IOStreams, v any) error {
	enc := json.NewEncoder(io.Out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
