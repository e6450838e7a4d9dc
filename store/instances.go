package store

import (
	"context"
	"fmt"
	"time"
)

// Instances is the cluster view: every `ccload serve` on the database
// upserts its own row every few seconds, and readers list the rows whose
// heartbeat is recent. Heartbeat times are the instances' own
// clocks, so the instances' clocks must agree to within a few seconds
// (NTP), well inside the 30 s a heartbeat stays live.
type Instances interface {
	// Heartbeat creates or replaces the row of in.ID.
	Heartbeat(ctx context.Context, in Instance) error
	// ListInstances returns the instances whose last heartbeat is at or
	// after since, oldest start first.
	ListInstances(ctx context.Context, since time.Time) ([]Instance, error)
	// DeleteInstance removes the row of id (a clean shutdown); a missing
	// one is not an error.
	DeleteInstance(ctx context.Context, id string) error
	// PruneInstances deletes the rows whose last heartbeat is before
	// before and returns how many.
	PruneInstances(ctx context.Context, before time.Time) (int64, error)
}

// Instance is one row of instances.
type Instance struct {
	ID        string // unique per process: hostname and a random suffix
	Hostname  string
	Address   string // host:port it serves on
	Version   string
	Started   time.Time
	Heartbeat time.Time
	InFlight  int64 // client requests in flight at the heartbeat
}

// Column sizes of instances.
const (
	maxInstanceID = 128
	maxHostname   = 255
	maxVersion    = 64
)

// Heartbeat implements Store.
func (s *sqlStore) Heartbeat(ctx context.Context, in Instance) error {
	if in.ID == "" {
		return fmt.Errorf("store: instance id is empty")
	}
	if err := checkIdent("instance id", in.ID, maxInstanceID); err != nil {
		return err
	}
	_, err := s.db.ExecContext(ctx, s.d.q(s.d.upsertInstance),
		in.ID, clean(in.Hostname, maxHostname), clean(in.Address, maxHostname), clean(in.Version, maxVersion),
		millis(in.Started), millis(in.Heartbeat), in.InFlight)
	if err != nil {
		return fmt.Errorf("store: heartbeat: %w", err)
	}
	return nil
}

// ListInstances implements Store.
func (s *sqlStore) ListInstances(ctx context.Context, since time.Time) ([]Instance, error) {
	rows, err := s.db.QueryContext(ctx, s.d.q(`SELECT id, hostname, address, version, started_ms, heartbeat_ms, in_flight
 FROM instances WHERE heartbeat_ms >= ? ORDER BY started_ms, id`), millis(since))
	if err != nil {
		return nil, fmt.Errorf("store: list instances: %w", err)
	}
	defer rows.Close()
	var out []Instance
	for rows.Next() {
		var in Instance
		var started, beat int64
		if err := rows.Scan(&in.ID, &in.Hostname, &in.Address, &in.Version, &started, &beat, &in.InFlight); err != nil {
			return nil, fmt.Errorf("store: list instances: %w", err)
		}
		in.Started, in.Heartbeat = fromMillis(started), fromMillis(beat)
		out = append(out, in)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list instances: %w", err)
	}
	return out, nil
}

// DeleteInstance implements Store.
func (s *sqlStore) DeleteInstance(ctx context.Context, id string) error {
	if _, err := s.db.ExecContext(ctx, s.d.q("DELETE FROM instances WHERE id = ?"), id); err != nil {
		return fmt.Errorf("store: delete instance: %w", err)
	}
	return nil
}

// PruneInstances implements Store.
func (s *sqlStore) PruneInstances(ctx context.Context, before time.Time) (int64, error) {
	res, err := s.db.ExecContext(ctx, s.d.q("DELETE FROM instances WHERE heartbeat_ms < ?"), millis(before))
	if err != nil {
		return 0, fmt.Errorf("store: prune instances: %w", err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}
