package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/stdlib"
)

// Shared is the part of the store that instances sharing one PostgreSQL or
// MySQL database use to share runtime state (storage.shared,
// docs/scale-out.md "Shared state"): a change feed of cooldowns, pauses and
// session pins, and the spend that cost limits are checked against. Every
// Store that Open returns implements it.
type Shared interface {
	// PublishChanges appends cs to the feed in one transaction, in order;
	// the database assigns their versions (Change.Version is ignored). On
	// PostgreSQL the commit also notifies every listener (Listen).
	PublishChanges(ctx context.Context, cs []Change) error
	// ChangesAfter returns at most limit changes with Version > after, in
	// version order.
	ChangesAfter(ctx context.Context, after int64, limit int) ([]Change, error)
	// FirstChange returns the lowest version still in the feed, 0 when it
	// is empty: a reader whose cursor is below it missed pruned changes.
	FirstChange(ctx context.Context) (int64, error)
	// LastChange returns the highest version in the feed, 0 when empty.
	LastChange(ctx context.Context) (int64, error)
	// PruneChanges deletes changes created before before.
	PruneChanges(ctx context.Context, before time.Time) (int64, error)
	// Listen calls wake (from its own goroutine) whenever a change is
	// published by any instance, until ctx ends or the connection fails.
	// Only PostgreSQL can; the others return ErrNoListen at once.
	Listen(ctx context.Context, wake func()) error

	// AddSpend adds each delta's USD to its row of shared_spend in one
	// transaction (an atomic increment: concurrent instances never lose
	// each other's spend).
	AddSpend(ctx context.Context, ds []Spend) error
	// SpendTotals returns every token's lifetime row and every channel's
	// row of day.
	SpendTotals(ctx context.Context, day string) ([]Spend, error)
}

// ErrNoListen is Listen's answer on a database without notifications: the
// reader polls instead.
var ErrNoListen = errors.New("store: this database has no change notifications; poll")

// Change kinds of the shared feed.
const (
	ChangeCooldown = "cooldown"
	ChangePause    = "pause"
	ChangePin      = "pin"
)

// Change is one entry of the shared feed: the new state of one item of a
// kind, as the instance that changed it saw it. Value "" means the item was
// removed (a cleared cooldown, a resumed channel). Item and Value are
// opaque to the store.
type Change struct {
	Version  int64 // assigned by the database
	Instance string
	Kind     string
	Item     string
	Value    string
	Time     time.Time
}

// Spend kinds of shared_spend.
const (
	SpendToken   = "token"   // Day is "": a token's cost_limit is lifetime
	SpendChannel = "channel" // Day is the UTC day of a daily_cost_limit
)

// Spend is one row of shared_spend, or an increment of one.
type Spend struct {
	Kind, Name, Day string
	USD             float64
}

// maxInstance bounds an instance id (the column is VARCHAR(64)).
const maxInstance = 64

// notifyChannel is the PostgreSQL notification channel of the feed. It is
// per database, so schemas of one database wake each other's readers, which
// only costs them an extra read.
const notifyChannel = "ccload_shared_changes"

var _ Shared = (*sqlStore)(nil)

// PublishChanges implements Shared.
func (s *sqlStore) PublishChanges(ctx context.Context, cs []Change) error {
	if len(cs) == 0 {
		return nil
	}
	for _, c := range cs {
		if c.Instance == "" || c.Kind == "" {
			return errors.New("store: a change needs an instance id and a kind")
		}
		if err := checkIdent("change instance", c.Instance, maxInstance); err != nil {
			return err
		}
		if err := checkIdent("change kind", c.Kind, maxProtocol); err != nil {
			return err
		}
	}
	now := millis(time.Now())
	err := s.withTx(ctx, func(tx *sql.Tx) error {
		ins := s.d.q("INSERT INTO shared_changes (instance, kind, item, value, created_ms) VALUES (?, ?, ?, ?, ?)")
		for _, c := range cs {
			if _, err := tx.ExecContext(ctx, ins, c.Instance, c.Kind, clean(c.Item, 0), clean(c.Value, 0), now); err != nil {
				return err
			}
		}
		if s.d.name == postgresDialect.name {
			if _, err := tx.ExecContext(ctx, "SELECT pg_notify($1, '')", notifyChannel); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: publish changes: %w", err)
	}
	return nil
}

// ChangesAfter implements Shared.
func (s *sqlStore) ChangesAfter(ctx context.Context, after int64, limit int) ([]Change, error) {
	rows, err := s.db.QueryContext(ctx, s.d.q(fmt.Sprintf(`SELECT version, instance, kind, item, value, created_ms
 FROM shared_changes WHERE version > ? ORDER BY version LIMIT %d`, max(limit, 1))), after)
	if err != nil {
		return nil, fmt.Errorf("store: read changes: %w", err)
	}
	defer rows.Close()
	var out []Change
	for rows.Next() {
		var c Change
		var created int64
		if err := rows.Scan(&c.Version, &c.Instance, &c.Kind, &c.Item, &c.Value, &created); err != nil {
			return nil, fmt.Errorf("store: read changes: %w", err)
		}
		c.Time = fromMillis(created)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: read changes: %w", err)
	}
	return out, nil
}

// FirstChange implements Shared.
func (s *sqlStore) FirstChange(ctx context.Context) (int64, error) {
	return s.changeBound(ctx, "MIN")
}

// LastChange implements Shared.
func (s *sqlStore) LastChange(ctx context.Context) (int64, error) {
	return s.changeBound(ctx, "MAX")
}

func (s *sqlStore) changeBound(ctx context.Context, fn string) (int64, error) {
	var v sql.NullInt64
	if err := s.db.QueryRowContext(ctx, "SELECT "+fn+"(version) FROM shared_changes").Scan(&v); err != nil {
		return 0, fmt.Errorf("store: change version: %w", err)
	}
	return v.Int64, nil
}

// PruneChanges implements Shared.
func (s *sqlStore) PruneChanges(ctx context.Context, before time.Time) (int64, error) {
	res, err := s.db.ExecContext(ctx, s.d.q("DELETE FROM shared_changes WHERE created_ms < ?"), millis(before))
	if err != nil {
		return 0, fmt.Errorf("store: prune changes: %w", err)
	}
	return res.RowsAffected()
}

// Listen implements Shared. It holds one connection of the pool for as long
// as it runs, and drops it afterwards rather than return a listening
// connection to the pool.
func (s *sqlStore) Listen(ctx context.Context, wake func()) error {
	if s.d.name != postgresDialect.name {
		return ErrNoListen
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("store: listen: %w", err)
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("driver connection is %T, not pgx", dc)
		}
		pc := sc.Conn()
		if _, err := pc.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
			return err
		}
		for {
			if _, err := pc.WaitForNotification(ctx); err != nil {
				// The connection still listens (or is broken): never
				// hand it back to the pool.
				return errors.Join(err, driver.ErrBadConn)
			}
			wake()
		}
	})
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("store: listen: %w", err)
}

// AddSpend implements Shared.
func (s *sqlStore) AddSpend(ctx context.Context, ds []Spend) error {
	if len(ds) == 0 {
		return nil
	}
	for _, d := range ds {
		if d.Kind != SpendToken && d.Kind != SpendChannel {
			return fmt.Errorf("store: spend kind %q: want token or channel", d.Kind)
		}
		if err := checkIdent("spend name", d.Name, maxName); err != nil {
			return err
		}
	}
	now := millis(time.Now())
	err := s.withTx(ctx, func(tx *sql.Tx) error {
		q := s.d.q(s.d.addSpend)
		for _, d := range ds {
			if _, err := tx.ExecContext(ctx, q, d.Kind, d.Name, d.Day, finite(d.USD), now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: add spend: %w", err)
	}
	return nil
}

// SpendTotals implements Shared.
func (s *sqlStore) SpendTotals(ctx context.Context, day string) ([]Spend, error) {
	rows, err := s.db.QueryContext(ctx, s.d.q(`SELECT kind, name, day, usd FROM shared_spend
 WHERE (kind = 'token' AND day = '') OR (kind = 'channel' AND day = ?)`), day)
	if err != nil {
		return nil, fmt.Errorf("store: read spend: %w", err)
	}
	defer rows.Close()
	var out []Spend
	for rows.Next() {
		var d Spend
		if err := rows.Scan(&d.Kind, &d.Name, &d.Day, &d.USD); err != nil {
			return nil, fmt.Errorf("store: read spend: %w", err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: read spend: %w", err)
	}
	return out, nil
}
