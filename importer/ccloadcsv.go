package importer

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// ccLoad's channel export (caidaoli/ccLoad, internal/app/admin_csv.go) has
// one row per channel. Its importer matches columns by a normalised name;
// csvColumn does the same, and also accepts Chinese headers. ccLoad itself
// knows only 策略/使用策略 (key_strategy); the other Chinese names are the
// labels its web UI and hand-made sheets use.
var csvAliases = map[string]string{
	"名称": "name", "渠道名称": "name", "渠道名": "name", "渠道": "name",
	"apikey": "api_key", "api_keys": "api_key", "keys": "api_key", "key": "api_key",
	"api密钥": "api_key", "密钥": "api_key", "api_key列表": "api_key",
	"url": "urls", "base_url": "urls", "baseurl": "urls", "地址": "urls", "渠道地址": "urls",
	"上游地址": "urls", "接口地址": "urls", "url列表": "urls",
	"优先级":   "priority",
	"model": "models", "model_list": "models", "model(s)": "models",
	"模型": "models", "模型列表": "models", "支持模型": "models",
	"model_redirect": "model_redirects", "modelredirects": "model_redirects", "redirects": "model_redirects",
	"模型重定向": "model_redirects", "模型映射": "model_redirects",
	"keystrategy": "key_strategy", "策略": "key_strategy", "使用策略": "key_strategy", "key策略": "key_strategy",
	"rpmlimit": "rpm_limit", "rpm": "rpm_limit", "rpm限制": "rpm_limit",
	"maxconcurrency": "max_concurrency", "concurrency": "max_concurrency", "concurrency_limit": "max_concurrency",
	"并发": "max_concurrency", "并发限制": "max_concurrency", "最大并发": "max_concurrency",
	"status": "enabled", "启用": "enabled", "状态": "enabled", "是否启用": "enabled",
	"type": "channel_type", "渠道类型": "channel_type", "类型": "channel_type",
	"request_delay": "request_delay_seconds", "请求延迟": "request_delay_seconds",
	"定时检测": "scheduled_check_enabled", "检测模型": "scheduled_check_model",
	"倍率": "cost_multiplier", "成本倍率": "cost_multiplier",
	"每日费用限额": "daily_cost_limit", "每日成本上限": "daily_cost_limit",
	"认证类型": "auth_type", "协议转换模式": "protocol_transform_mode",
}

// csvColumns are the columns ccLoad has exported over its versions, plus
// cost_multiplier and daily_cost_limit, which ccload has too.
var csvColumns = map[string]bool{
	"id": true, "name": true, "api_key": true, "urls": true, "priority": true, "models": true,
	"model_redirects": true, "key_strategy": true, "rpm_limit": true, "max_concurrency": true,
	"enabled": true, "channel_type": true, "request_delay_seconds": true, "protocol_transforms": true,
	"protocol_transform_mode": true, "scheduled_check_enabled": true, "scheduled_check_model": true,
	"scheduled_check_interval_minutes": true, "scheduled_check_start_time": true,
	"cooldown_detection_rules": true, "retry_other_keys_on_failure": true, "auth_type": true,
	"oauth_credential": true, "management_daily_checkin_enabled": true, "management_daily_checkin_time": true,
	"websockets": true, "model_pricing": true, "api_key_allowed_models": true,
	"api_key_cost_multipliers": true, "api_key_priorities": true, "api_key_model_scope_empty": true,
	"cost_multiplier": true, "daily_cost_limit": true,
}

// csvColumn normalises a header cell to ccLoad's column name.
func csvColumn(h string) string {
	h = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))
	h = strings.NewReplacer(" ", "_", "-", "_").Replace(h)
	if c, ok := csvAliases[h]; ok {
		return c
	}
	return h
}

// ReadCCLoadCSV reads ccLoad's channel CSV export. A row that cannot
// become a usable channel is still written, disabled, with a comment; a
// file that is not CSV or lacks the name and urls columns is an error.
func ReadCCLoadCSV(data []byte) (*Config, error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	r.TrimLeadingSpace = true
	header, err := r.Read()
	if errors.Is(err, io.EOF) {
		return nil, errors.New("empty file")
	}
	if err != nil {
		return nil, fmt.Errorf("not a CSV file: %w", err)
	}
	cfg := &Config{Format: FormatCCLoadCSV}
	cols := map[string]int{}
	for i, h := range header {
		c := csvColumn(h)
		switch _, dup := cols[c]; {
		case c == "":
		case dup:
			cfg.Notes = append(cfg.Notes, fmt.Sprintf("column %q appears twice; only the first was read", oneLine(h, 40)))
		case !csvColumns[c]:
			cols[c] = i
			cfg.Notes = append(cfg.Notes, fmt.Sprintf("column %q is not a ccLoad column; its values were not copied", oneLine(h, 40)))
		default:
			cols[c] = i
		}
	}
	for _, need := range []string{"name", "urls"} {
		if _, ok := cols[need]; !ok {
			// The header is not echoed: a file that is not a CSV export
			// (an .env file, say) may have a secret on its first line.
			return nil, fmt.Errorf("no %q column in the first line: not a ccLoad channel export", need)
		}
	}
	names := namer{}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("CSV: %w", err)
		}
		line, _ := r.FieldPos(0)
		row := csvRow{rec: rec, cols: cols, line: line}
		if row.empty() {
			continue
		}
		if ch := readCSVRow(row, names); ch != nil {
			cfg.Channels = append(cfg.Channels, ch)
		} else {
			cfg.Notes = append(cfg.Notes, fmt.Sprintf("CSV line %d skipped: it has no channel name", line))
		}
	}
	if len(cfg.Channels) == 0 {
		return nil, errors.New("no channels: the file has a header but no rows")
	}
	return cfg, nil
}

// csvRow is one record with access by column name.
type csvRow struct {
	rec  []string
	cols map[string]int
	line int
}

// get returns the trimmed cell of column c, "" when absent.
func (r csvRow) get(c string) string {
	i, ok := r.cols[c]
	if !ok || i >= len(r.rec) {
		return ""
	}
	return strings.TrimSpace(r.rec[i])
}

func (r csvRow) has(c string) bool { _, ok := r.cols[c]; return ok }

func (r csvRow) empty() bool {
	for _, c := range r.rec {
		if strings.TrimSpace(c) != "" {
			return false
		}
	}
	return true
}

// rowNotes collects what one row could not carry over.
type rowNotes []string

func (n *rowNotes) add(format string, args ...any) { *n = append(*n, fmt.Sprintf(format, args...)) }

// readCSVRow converts one row; nil when it has no name.
func readCSVRow(r csvRow, names namer) *Channel {
	name := r.get("name")
	if name == "" {
		return nil
	}
	base := slug(name)
	ch := &Channel{Name: names.unique(base), LineComments: map[string]string{}}
	ch.Comments = append(ch.Comments, fmt.Sprintf("ccLoad channel %q (CSV line %d)", name, r.line))
	if ch.Name != base {
		ch.Comments = append(ch.Comments, "an earlier row has the same name; this one is "+ch.Name)
	}
	var notes rowNotes

	if auth := strings.ToLower(r.get("auth_type")); auth == "codex_oauth" {
		// The row's credential JSON is not copied: refresh tokens rotate,
		// so it belongs in the database, sealed, through ccload login.
		ch.OAuth, ch.Accounts = "codex", []string{"main"}
		notes.add("auth_type codex_oauth: a ChatGPT account channel; save the row's oauth_credential JSON to a file and run `ccload login codex --channel %s --account main --import FILE` (the credential was not copied here)", ch.Name)
	} else if auth == "xai_oauth" {
		// xAI publishes no client id for third-party device sign-in, so
		// the channel cannot serve until one is set: left disabled, the
		// steps in the note.
		ch.OAuth, ch.Accounts, ch.Disabled = "xai", []string{"main"}, true
		notes.add("auth_type xai_oauth: an xAI account channel, left disabled: set oauth_client_id (the OAuth client registered for your device sign-in), save the row's oauth_credential JSON to a file and run `ccload login xai --channel %s --account main --import FILE`, then enable it (the credential was not copied here)", ch.Name)
	} else if auth != "" && auth != "api_key" {
		ch.Disabled = true
		notes.add("auth_type %s: ccload has no OAuth login; the credential was not copied (add keys, then enable)", auth)
	} else if r.get("oauth_credential") != "" {
		notes.add("oauth_credential: a management account (not copied)")
	}
	ch.Keys = csvKeys(r, &notes)
	if ch.OAuth != "" {
		ch.Keys = nil // an account channel's credential is the account
	}

	channelType := ""
	if r.has("channel_type") {
		channelType = strings.ToLower(r.get("channel_type"))
		if channelType == "" {
			channelType = "anthropic" // ccLoad's default for an empty type
		}
	}
	ch.URLs = parseURLCell(r.get("urls"), channelType, &notes)
	_, renames := r.cols["model_redirects"]
	ch.Models = parseModelCell(r.get("models"), r.get("model_redirects"), !renames, &notes)

	if v := r.get("priority"); v != "" {
		if p, err := strconv.Atoi(v); err == nil {
			ch.Priority = p
		} else {
			notes.add("priority %q is not an integer", oneLine(v, 40))
		}
	}
	ch.RPMLimit = csvCount(r, "rpm_limit", &notes)
	ch.MaxConcurrency = csvCount(r, "max_concurrency", &notes)
	if v := r.get("daily_cost_limit"); v != "" {
		if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 {
			ch.DailyCostLimit = f
		} else {
			notes.add("daily_cost_limit %q is not a number >= 0", oneLine(v, 40))
		}
	}
	if v := r.get("cost_multiplier"); v != "" {
		if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 {
			if f != 1 {
				ch.CostMultiplier = &f
			}
		} else {
			notes.add("cost_multiplier %q is not a number >= 0", oneLine(v, 40))
		}
	}
	switch ks := strings.ToLower(r.get("key_strategy")); {
	case ks == "sequential" || ks == "round_robin":
		if len(ch.Keys) > 1 {
			ch.KeyStrategy = ks
		}
	case ks == "":
		if len(ch.Keys) > 1 {
			ch.KeyStrategy = "sequential"
			ch.LineComments["key_strategy"] = "ccLoad's default"
		}
	default:
		notes.add("key_strategy %q is unknown (want sequential or round_robin)", oneLine(ks, 40))
	}
	if v := r.get("enabled"); v != "" {
		if b, ok := parseBool(v); ok {
			ch.Disabled = ch.Disabled || !b
		} else {
			notes.add("enabled %q is not true or false; the channel was left enabled", oneLine(v, 40))
		}
	}
	ch.Check = csvCheck(r, ch.Models, &notes)
	csvUncarried(r, &notes)

	// A channel ccload cannot route is kept, disabled, so nothing is lost.
	if !ch.Disabled {
		var missing []string
		for _, m := range []struct {
			what string
			n    int
		}{{"URL", len(ch.URLs)}, {"key", len(ch.Keys)}, {"model", len(ch.Models)}} {
			if m.n == 0 && !(m.what == "key" && ch.OAuth != "") {
				missing = append(missing, m.what)
			}
		}
		if len(missing) > 0 {
			ch.Disabled = true
			notes.add("disabled by the import: no usable %s", strings.Join(missing, ", no "))
		}
	}
	ch.Notes = notes
	return ch
}

// csvKeys splits the api_key cell (commas or newlines), drops duplicates
// and the keys ccLoad marked disabled. Notes name keys by position only.
func csvKeys(r csvRow, notes *rowNotes) []Value {
	cell := r.get("api_key")
	parts := strings.FieldsFunc(cell, func(c rune) bool { return c == ',' || c == '\n' || c == '\r' })
	var disabled []bool
	if v := r.get("api_key_model_scope_empty"); v != "" {
		if err := jsonUnmarshal(v, &disabled); err != nil {
			disabled = nil
		}
	}
	seen := map[string]bool{}
	var keys []Value
	i := 0
	for _, p := range parts {
		k := strings.TrimSpace(p)
		if k == "" {
			continue
		}
		i++
		switch {
		case seen[k]:
			notes.add("key %d is the same as an earlier key; left out", i)
		case i-1 < len(disabled) && disabled[i-1]:
			notes.add("key %d was disabled in ccLoad (api_key_model_scope_empty); left out", i)
		default:
			seen[k] = true
			keys = append(keys, SecretValue(k))
		}
	}
	return keys
}

// csvCount reads a non-negative integer column.
func csvCount(r csvRow, col string, notes *rowNotes) int {
	v := r.get(col)
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		notes.add("%s %q is not an integer >= 0", col, oneLine(v, 40))
		return 0
	}
	return n
}

// csvCheck turns ccLoad's scheduled check into `check:`.
func csvCheck(r csvRow, models []Model, notes *rowNotes) *Check {
	on, _ := parseBool(r.get("scheduled_check_enabled"))
	if !on {
		return nil
	}
	model := r.get("scheduled_check_model")
	if model == "" {
		for _, m := range models {
			if !m.Disabled {
				model = m.Name
				break
			}
		}
	}
	found := false
	for _, m := range models {
		found = found || m.Name == model || m.Upstream == model
	}
	if model == "" || !found {
		notes.add("scheduled check of %q: not a model of this channel", model)
		return nil
	}
	c := &Check{Model: model}
	if v := r.get("scheduled_check_interval_minutes"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			c.Every = time.Duration(n) * time.Minute
		} else {
			notes.add("scheduled_check_interval_minutes %q is not a positive integer", oneLine(v, 40))
		}
	}
	if v := r.get("scheduled_check_start_time"); v != "" {
		notes.add("scheduled_check_start_time %s (ccload spreads checks with jitter)", oneLine(v, 20))
	}
	return c
}

// uncarried lists ccLoad columns ccload has no place for, with the value
// that means "nothing set" and why it is not carried over.
var uncarried = []struct {
	col     string
	isUnset func(string) bool
	why     string
}{
	{"protocol_transform_mode", oneOf("", "auto"), "ccload converts between protocols as each URL's protocols require"},
	{"protocol_transforms", oneOf("", "[]"), "ccload converts between protocols as each URL's protocols require"},
	{"request_delay_seconds", oneOf("", "0"), "ccload does not delay requests"},
	{"cooldown_detection_rules", oneOf("", "{}", "null"), "ccload's failure classifier is built in"},
	{"retry_other_keys_on_failure", falsy, "ccload picks the next key, URL or channel by failure scope"},
	{"websockets", falsy, "ccload does not proxy websockets"},
	{"management_daily_checkin_enabled", falsy, "no equivalent"},
	{"management_daily_checkin_time", oneOf(""), "no equivalent"},
	{"model_pricing", oneOf("", "{}", "null"), "ccload prices by model in the top-level pricing: section"},
	{"api_key_allowed_models", allEmptyLists, "ccload has no per-key model list"},
	{"api_key_priorities", allNumbers(0), "ccload orders keys by their place in keys:"},
	{"api_key_cost_multipliers", allNumbers(1), "ccload has one cost_multiplier per channel"},
}

func csvUncarried(r csvRow, notes *rowNotes) {
	for _, u := range uncarried {
		v := r.get(u.col)
		if !u.isUnset(v) {
			notes.add("%s: %s (%s)", u.col, oneLine(v, 60), u.why)
		}
	}
}

func oneOf(vals ...string) func(string) bool {
	return func(v string) bool {
		for _, x := range vals {
			if strings.EqualFold(v, x) {
				return true
			}
		}
		return false
	}
}

func falsy(v string) bool {
	b, ok := parseBool(v)
	return v == "" || ok && !b
}

func allEmptyLists(v string) bool {
	var lists [][]string
	if v == "" || v == "null" {
		return true
	}
	if jsonUnmarshal(v, &lists) != nil {
		return false
	}
	for _, l := range lists {
		if len(l) > 0 {
			return false
		}
	}
	return true
}

func allNumbers(want float64) func(string) bool {
	return func(v string) bool {
		var ns []float64
		if v == "" || v == "null" {
			return true
		}
		if jsonUnmarshal(v, &ns) != nil {
			return false
		}
		for _, n := range ns {
			if n != want {
				return false
			}
		}
		return true
	}
}

// parseBool reads the spellings of a flag found in exports and sheets.
func parseBool(v string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "1", "yes", "y", "on", "enabled", "启用", "是", "开启", "开":
		return true, true
	case "false", "0", "no", "n", "off", "disabled", "禁用", "否", "关闭", "关":
		return false, true
	}
	return false, false
}
