package store

import (
	"fmt"
	"strconv"
	"strings"
)

// dialect holds every SQL difference between the three databases. All other
// SQL in the package is written once, with "?" placeholders, and passed
// through q, which rewrites them to "$1, $2, …" for PostgreSQL.
type dialect struct {
	name      string // Driver() value and migration file suffix
	sqlDriver string // database/sql driver name
	dollar    bool   // placeholders are $n

	// upsertUsage adds one aggregate to usage_daily. Arguments: day, token,
	// channel, model, requests, errors, input, output, cache read, cache
	// write, cost.
	upsertUsage string
	// upsertCooldown creates or replaces one cooldown. Arguments: scope,
	// channel, key_fp, model, url, until_ms, strikes, kind, reason, updated_ms.
	upsertCooldown string
	// upsertOverride creates or replaces one override. Arguments: kind,
	// target, value, created_ms.
	upsertOverride string
	// addSpend adds to one shared_spend row, creating it. Arguments: kind,
	// name, day, usd, updated_ms.
	addSpend string
	// upsertInstance creates or replaces one instances row. Arguments: id,
	// hostname, address, version, started_ms, heartbeat_ms, in_flight.
	upsertInstance string
	// pruneLogs deletes at most pruneBatch logs older than its one argument.
	// MySQL has no LIMIT inside IN (subquery) but has DELETE … LIMIT; the
	// others are the other way round.
	pruneLogs string
	// pruneDebug is pruneLogs for request_debug.
	pruneDebug string
	// returningID: the driver has no LastInsertId (pgx), so a debug row's
	// INSERT reads its ID back with RETURNING.
	returningID bool
	// logSpans: the dialect keeps request_log_spans instead of indexes on
	// request_logs' token, channel and model (spans.go).
	logSpans bool
	// insertLogs begins the multi-row INSERT of a log batch.
	//
	// On SQLite it is INSERT OR FAIL. A plain INSERT of several rows may
	// fail halfway, and SQLite then undoes the rows it already wrote; to be
	// able to, it copies each page the statement changes to a statement
	// journal first. In memory (temp_store) that still costs a malloc per
	// KiB: 9% of a 500-row batch (store/BENCH.md). OR FAIL keeps the rows
	// before a failure instead, which a log batch never sees: no column it
	// fills can violate a constraint, and a failed batch rolls back whole
	// (withTx).
	insertLogs string
}

const pruneBatch = 5000

// Statements shared by SQLite and PostgreSQL, which both speak
// INSERT … ON CONFLICT … DO UPDATE with the excluded pseudo-table.
const (
	onConflictUsage = `INSERT INTO usage_daily
 (day, token, channel, model, requests, errors, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost)
 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
 ON CONFLICT (day, token, channel, model) DO UPDATE SET
 requests = usage_daily.requests + excluded.requests,
 errors = usage_daily.errors + excluded.errors,
 input_tokens = usage_daily.input_tokens + excluded.input_tokens,
 output_tokens = usage_daily.output_tokens + excluded.output_tokens,
 cache_read_tokens = usage_daily.cache_read_tokens + excluded.cache_read_tokens,
 cache_write_tokens = usage_daily.cache_write_tokens + excluded.cache_write_tokens,
 cost = usage_daily.cost + excluded.cost`

	onConflictCooldown = `INSERT INTO cooldowns
 (scope, channel, key_fp, model, url, until_ms, strikes, kind, reason, updated_ms)
 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
 ON CONFLICT (scope, channel, key_fp, model, url) DO UPDATE SET
 until_ms = excluded.until_ms, strikes = excluded.strikes, kind = excluded.kind,
 reason = excluded.reason, updated_ms = excluded.updated_ms`

	onConflictOverride = `INSERT INTO overrides (kind, target, value, created_ms) VALUES (?, ?, ?, ?)
 ON CONFLICT (kind, target) DO UPDATE SET value = excluded.value, created_ms = excluded.created_ms`

	onConflictSpend = `INSERT INTO shared_spend (kind, name, day, usd, updated_ms) VALUES (?, ?, ?, ?, ?)
 ON CONFLICT (kind, name, day) DO UPDATE SET
 usd = shared_spend.usd + excluded.usd, updated_ms = excluded.updated_ms`
	onConflictInstance = `INSERT INTO instances (id, hostname, address, version, started_ms, heartbeat_ms, in_flight)
 VALUES (?, ?, ?, ?, ?, ?, ?)
 ON CONFLICT (id) DO UPDATE SET hostname = excluded.hostname, address = excluded.address,
 version = excluded.version, started_ms = excluded.started_ms, heartbeat_ms = excluded.heartbeat_ms,
 in_flight = excluded.in_flight`
)

// pruneByID is the SQLite and PostgreSQL prune statement.
var pruneByID = fmt.Sprintf(`DELETE FROM request_logs WHERE id IN
 (SELECT id FROM request_logs WHERE ts < ? ORDER BY id LIMIT %d)`, pruneBatch)

// pruneDebugByID is pruneByID for request_debug.
var pruneDebugByID = fmt.Sprintf(`DELETE FROM request_debug WHERE log_id IN
 (SELECT log_id FROM request_debug WHERE ts < ? ORDER BY log_id LIMIT %d)`, pruneBatch)

var (
	sqliteDialect = dialect{
		name:           "sqlite",
		sqlDriver:      "sqlite",
		upsertUsage:    onConflictUsage,
		upsertCooldown: onConflictCooldown,
		upsertOverride: onConflictOverride,
		addSpend:       onConflictSpend,
		upsertInstance: onConflictInstance,
		pruneLogs:      pruneByID,
		pruneDebug:     pruneDebugByID,
		insertLogs:     "INSERT OR FAIL INTO request_logs",
		logSpans:       true,
	}

	postgresDialect = dialect{
		name:           "postgres",
		sqlDriver:      "pgx",
		dollar:         true,
		upsertUsage:    onConflictUsage,
		upsertCooldown: onConflictCooldown,
		upsertOverride: onConflictOverride,
		addSpend:       onConflictSpend,
		upsertInstance: onConflictInstance,
		pruneLogs:      pruneByID,
		pruneDebug:     pruneDebugByID,
		returningID:    true,
		insertLogs:     "INSERT INTO request_logs",
	}

	// mysqlDialect uses VALUES(col), which MySQL 8.0.20+ deprecates (with a
	// warning) in favour of a row alias that MariaDB does not support.
	mysqlDialect = dialect{
		name:      "mysql",
		sqlDriver: "mysql",
		upsertUsage: `INSERT INTO usage_daily
 (day, token, channel, model, requests, errors, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost)
 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
 ON DUPLICATE KEY UPDATE
 requests = requests + VALUES(requests),
 errors = errors + VALUES(errors),
 input_tokens = input_tokens + VALUES(input_tokens),
 output_tokens = output_tokens + VALUES(output_tokens),
 cache_read_tokens = cache_read_tokens + VALUES(cache_read_tokens),
 cache_write_tokens = cache_write_tokens + VALUES(cache_write_tokens),
 cost = cost + VALUES(cost)`,
		upsertCooldown: `INSERT INTO cooldowns
 (scope, channel, key_fp, model, url, until_ms, strikes, kind, reason, updated_ms)
 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
 ON DUPLICATE KEY UPDATE
 until_ms = VALUES(until_ms), strikes = VALUES(strikes), kind = VALUES(kind),
 reason = VALUES(reason), updated_ms = VALUES(updated_ms)`,
		upsertOverride: `INSERT INTO overrides (kind, target, value, created_ms) VALUES (?, ?, ?, ?)
 ON DUPLICATE KEY UPDATE value = VALUES(value), created_ms = VALUES(created_ms)`,
		addSpend: `INSERT INTO shared_spend (kind, name, day, usd, updated_ms) VALUES (?, ?, ?, ?, ?)
 ON DUPLICATE KEY UPDATE usd = usd + VALUES(usd), updated_ms = VALUES(updated_ms)`,
		upsertInstance: `INSERT INTO instances (id, hostname, address, version, started_ms, heartbeat_ms, in_flight)
 VALUES (?, ?, ?, ?, ?, ?, ?)
 ON DUPLICATE KEY UPDATE hostname = VALUES(hostname), address = VALUES(address),
 version = VALUES(version), started_ms = VALUES(started_ms), heartbeat_ms = VALUES(heartbeat_ms),
 in_flight = VALUES(in_flight)`,
		pruneLogs:  fmt.Sprintf(`DELETE FROM request_logs WHERE ts < ? ORDER BY id LIMIT %d`, pruneBatch),
		pruneDebug: fmt.Sprintf(`DELETE FROM request_debug WHERE ts < ? ORDER BY log_id LIMIT %d`, pruneBatch),
		insertLogs: "INSERT INTO request_logs",
	}
)

// dialects maps the storage.driver names accepted by Open.
var dialects = map[string]dialect{
	"sqlite":   sqliteDialect,
	"mysql":    mysqlDialect,
	"postgres": postgresDialect,
}

// q returns query with its "?" placeholders in the dialect's syntax. Queries
// in this package never contain "?" inside string literals.
func (d dialect) q(query string) string {
	if !d.dollar {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 16)
	n := 0
	for i := 0; i < len(query); i++ {
		if query[i] != '?' {
			b.WriteByte(query[i])
			continue
		}
		n++
		b.WriteByte('$')
		b.WriteString(strconv.Itoa(n))
	}
	return b.String()
}
