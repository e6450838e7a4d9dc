package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"
)

// The price catalog's last good copy, one row per catalog URL:
// the document as fetched, validated by the caller, so that a server that
// starts while the catalog is unreachable still prices the catalog's
// models. Every Store that Open returns has these two methods; they are
// not in the Store interface because only the catalog sync uses them
// (package pricing/catalog states the interface it needs).

// CatalogCopy is the saved copy of the price catalog fetched from URL.
type CatalogCopy struct {
	URL     string
	Body    []byte
	Fetched time.Time
}

// SaveCatalog creates or replaces the copy for c.URL. Delete-then-insert in
// one transaction is the same SQL in every dialect, and the table has one
// row per configured URL, so the upsert's extra statement costs nothing.
func (s *sqlStore) SaveCatalog(ctx context.Context, c CatalogCopy) error {
	if c.URL == "" || len(c.URL) > maxURL {
		return fmt.Errorf("store: save catalog: url must be 1 to %d bytes", maxURL)
	}
	if !utf8.Valid(c.Body) {
		return errors.New("store: save catalog: body is not UTF-8 text")
	}
	err := s.withTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, s.d.q("DELETE FROM price_catalog WHERE url = ?"), c.URL); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, s.d.q("INSERT INTO price_catalog (url, body, fetched_ms) VALUES (?, ?, ?)"),
			c.URL, string(c.Body), millis(c.Fetched))
		return err
	})
	if err != nil {
		return fmt.Errorf("store: save catalog: %w", err)
	}
	return nil
}

// LoadCatalog returns the copy for url; ok is false when there is none.
func (s *sqlStore) LoadCatalog(ctx context.Context, url string) (CatalogCopy, bool, error) {
	var body string
	var ms int64
	err := s.db.QueryRowContext(ctx, s.d.q("SELECT body, fetched_ms FROM price_catalog WHERE url = ?"), url).Scan(&body, &ms)
	if errors.Is(err, sql.ErrNoRows) {
		return CatalogCopy{}, false, nil
	}
	if err != nil {
		return CatalogCopy{}, false, fmt.Errorf("store: load catalog: %w", err)
	}
	return CatalogCopy{URL: url, Body: []byte(body), Fetched: fromMillis(ms)}, true, nil
}
