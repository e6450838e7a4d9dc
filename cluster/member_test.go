package cluster_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccload/ccload/ccloadtest/wait"
	"github.com/ccload/ccload/cluster"
	"github.com/ccload/ccload/internal/clock"
	"github.com/ccload/ccload/store"
)

var epoch = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func openStore(t *testing.T) store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), "sqlite", filepath.Join(t.TempDir(), "ccload.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func ids(list []store.Instance) string {
	var out []string
	for _, in := range list {
		out = append(out, in.Hostname)
	}
	return strings.Join(out, ",")
}

// TestLiveList: an instance lists itself before any heartbeat; others appear
// once they beat and drop out when their heartbeat is older than LiveFor.
func TestLiveList(t *testing.T) {
	st := openStore(t)
	ctx := context.Background()
	clk := clock.NewFake(epoch)
	var inFlight int64 = 3
	a := cluster.New(cluster.Options{Store: st, Version: "v1", Clock: clk, Hostname: "a",
		InFlight: func() int64 { return inFlight }})
	b := cluster.New(cluster.Options{Store: st, Version: "v1", Clock: clk, Hostname: "b"})
	a.SetAddress("0.0.0.0:8080")
	if got := a.Self().Address; got != "a:8080" {
		t.Errorf("address of an unspecified listener = %q, want the hostname's", got)
	}
	if !strings.HasPrefix(a.Self().ID, "a-") || len(a.Self().ID) != len("a-")+8 {
		t.Errorf("id %q: want hostname and 8 hex digits", a.Self().ID)
	}

	list, err := a.Live(ctx)
	if err != nil || ids(list) != "a" || list[0].InFlight != 3 {
		t.Fatalf("before any heartbeat: %+v %v; want a alone with its in-flight count", list, err)
	}
	clk.Advance(time.Second)
	if err := b.Beat(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.Beat(ctx); err != nil {
		t.Fatal(err)
	}
	if list, err := a.Live(ctx); err != nil || ids(list) != "a,b" {
		t.Fatalf("both beat: %s %v, want a,b (oldest start first)", ids(list), err)
	}
	// a keeps beating, b stops: b is listed up to 30 s (the documented
	// bound, not the constant) after its beat.
	clk.Advance(30 * time.Second)
	a.Beat(ctx)
	if list, _ := b.Live(ctx); ids(list) != "a,b" {
		t.Fatalf("at exactly 30 s: %s, want b still listed", ids(list))
	}
	clk.Advance(time.Millisecond)
	if list, _ := a.Live(ctx); ids(list) != "a" {
		t.Fatalf("after 30 s: %s, want b dropped", ids(list))
	}
}

// TestRunRemovesRowOnStop: a clean stop deletes the instance's row.
func TestRunRemovesRowOnStop(t *testing.T) {
	st := openStore(t)
	m := cluster.New(cluster.Options{Store: st, Hostname: "h"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { m.Run(ctx); close(done) }()
	wait.Eventually(t, 10*time.Second, "this instance's heartbeat row", func() bool {
		list, err := st.ListInstances(context.Background(), time.Time{})
		return err == nil && len(list) == 1 && list[0].ID == m.Self().ID
	})
	cancel()
	<-done
	if list, err := st.ListInstances(context.Background(), time.Time{}); err != nil || len(list) != 0 {
		t.Fatalf("after a clean stop: %+v %v, want no row", list, err)
	}
}

// TestLiveDuringOutage: with the database gone the last list read is
// returned with the error.
func TestLiveDuringOutage(t *testing.T) {
	st := openStore(t)
	ctx := context.Background()
	clk := clock.NewFake(epoch)
	a := cluster.New(cluster.Options{Store: st, Clock: clk, Hostname: "a"})
	b := cluster.New(cluster.Options{Store: st, Clock: clk, Hostname: "b"})
	a.Beat(ctx)
	b.Beat(ctx)
	if list, err := a.Live(ctx); err != nil || ids(list) != "a,b" {
		t.Fatalf("%s %v", ids(list), err)
	}
	st.Close()
	list, err := a.Live(ctx)
	if err == nil || ids(list) != "a,b" {
		t.Fatalf("during the outage: %s %v, want the last list and an error", ids(list), err)
	}
}
