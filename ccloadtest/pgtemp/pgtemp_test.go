package pgtemp_test

import (
	"context"
	"database/sql"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/ccload/ccload/ccloadtest/pgtemp"
)

func TestStartStop(t *testing.T) {
	ctx := context.Background()
	s, err := pgtemp.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Remove()
	db, _ := sql.Open("pgx", s.DSN())
	defer db.Close()
	if err := db.Ping(); err != nil {
		t.Fatal(err, s.Log())
	}
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.Ping(); err == nil {
		t.Fatal("ping after stop succeeded")
	}
	if err := s.StartAgain(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.Ping(); err != nil {
		t.Fatal(err)
	}
}
