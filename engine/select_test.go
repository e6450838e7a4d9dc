package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/ccload/ccload/config"
)

func TestSmoothWRRSequence(t *testing.T) {
	s := &registry{}
	names := []string{"a", "b", "c"}
	weights := []int{5, 1, 1}
	var got strings.Builder
	for range 14 {
		got.WriteString(names[s.smoothWRR("set", names, weights)])
	}
	// The nginx smooth sequence for 5,1,1, twice: interleaved, exact shares.
	if want := "aabacaaaabacaa"; got.String() != want {
		t.Fatalf("sequence %s, want %s", got.String(), want)
	}
}

func TestOrderRoutesPriorityThenWeight(t *testing.T) {
	e := New(Options{})
	mk := func(name string, prio, weight int) config.Route {
		return config.Route{Channel: &config.Channel{Name: name, Priority: prio, Weight: weight}}
	}
	routes := []config.Route{mk("low", 1, 1), mk("h1", 10, 3), mk("h2", 10, 1), mk("mid", 5, 1)}
	firsts := map[string]int{}
	for range 400 {
		out := e.orderRoutes(routes, func(ch *config.Channel) float64 { return float64(ch.Priority) })
		if out[2].Channel.Name != "mid" || out[3].Channel.Name != "low" {
			t.Fatalf("lower priorities out of order: %v", names(out))
		}
		firsts[out[0].Channel.Name]++
	}
	// Weights 3:1 inside priority 10 give exactly 300 and 100 first picks.
	if firsts["h1"] != 300 || firsts["h2"] != 100 {
		t.Fatalf("first picks %v, want h1=300 h2=100", firsts)
	}
}

func TestURLOrderExploresThenPrefersFast(t *testing.T) {
	e := New(Options{})
	ch := &config.Channel{Name: "c", URLs: []config.URL{{URL: "http://a"}, {URL: "http://b"}, {URL: "http://c"}}}
	e.reg.observeURL("c", "http://a", 500)
	e.reg.observeURL("c", "http://b", 5)
	// c was never visited: it goes first.
	fastFirst := 0
	for range 1000 {
		o := e.urlOrder(ch, false)
		if len(o) != 3 || o[0] != 2 {
			t.Fatalf("unvisited URL not first: %v", o)
		}
		if o[1] == 1 {
			fastFirst++
		}
	}
	// b is 100x faster, so it should come second in ~99% of draws.
	if fastFirst < 950 {
		t.Fatalf("fast URL second only %d/1000 times", fastFirst)
	}
}

func names(rs []config.Route) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Channel.Name
	}
	return out
}

func TestEffectivePriorityFormula(t *testing.T) {
	e := New(Options{})
	now := time.Unix(1_800_000_000, 0)
	hs := config.HealthScore{Enabled: true, Window: config.Duration(30 * time.Minute), MinSamples: 20, Penalty: 100}
	ch := &config.Channel{Name: "c", Priority: 10}
	if p := e.effectivePriority(ch, hs, now); p != 10 {
		t.Fatalf("no samples: %v", p)
	}
	// docs/routing.md example: 2 failures of 4 samples -> 10 - 0.5*100*(4/20) = 0.
	for i := range 4 {
		e.reg.health.get("c").Add(now, i%2 == 0)
	}
	if p := e.effectivePriority(ch, hs, now); p != 0 {
		t.Fatalf("2 of 4 failed: %v, want 0", p)
	}
	// 20 of 40 failed: full confidence -> 10 - 50 = -40.
	for i := range 36 {
		e.reg.health.get("c").Add(now, i%2 == 0)
	}
	if p := e.effectivePriority(ch, hs, now); p != -40 {
		t.Fatalf("20 of 40 failed: %v, want -40", p)
	}
	// Samples older than the window no longer count.
	if p := e.effectivePriority(ch, hs, now.Add(31*time.Minute)); p != 10 {
		t.Fatalf("after the window: %v, want 10", p)
	}
	hs.Enabled = false
	if p := e.effectivePriority(ch, hs, now); p != 10 {
		t.Fatalf("disabled: %v", p)
	}
}
