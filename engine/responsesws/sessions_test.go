package responsesws

import (
	"strings"
	"testing"
	"time"

	"github.com/ccload/ccload/config"
)

func item(n int) [][]byte { return [][]byte{[]byte(`"` + strings.Repeat("x", n) + `"`)} }

func bounds() config.WebSockets {
	b := config.DefaultWebSockets
	b.SessionTTL = config.Duration(time.Hour)
	return b
}

func TestSessionsKeepTokensApart(t *testing.T) {
	var st Stats
	s := NewSessions(&st)
	now := time.Unix(1e9, 0)
	s.Put(bounds(), SessionKey("alice", "sess"), "alice", "resp_1", item(10), now)
	if _, ok := s.get(bounds(), SessionKey("alice", "sess"), "resp_1", now); !ok {
		t.Fatal("alice lost her own chain")
	}
	if _, ok := s.get(bounds(), SessionKey("bob", "sess"), "resp_1", now); ok {
		t.Fatal("bob read alice's chain through the same Session-Id")
	}
	if _, ok := s.get(bounds(), SessionKey("alice", "other"), "resp_1", now); ok {
		t.Fatal("another session of alice read the chain")
	}
	if st.Sessions.Load() != 1 || st.TranscriptBytes.Load() <= 10 {
		t.Errorf("stats: sessions %d bytes %d", st.Sessions.Load(), st.TranscriptBytes.Load())
	}
	s.DropTokens(func(tok string) bool { return tok != "alice" })
	if _, ok := s.get(bounds(), SessionKey("alice", "sess"), "resp_1", now); ok || st.Sessions.Load() != 0 || st.TranscriptBytes.Load() != 0 {
		t.Errorf("a removed token's session survived: sessions %d bytes %d", st.Sessions.Load(), st.TranscriptBytes.Load())
	}
}

func TestSessionsBounds(t *testing.T) {
	now := time.Unix(1e9, 0)
	t.Run("max_sessions evicts the least recently used", func(t *testing.T) {
		var st Stats
		s := NewSessions(&st)
		b := bounds()
		b.MaxSessions = 2
		s.Put(b, "t\x00a", "t", "ra", item(1), now)
		s.Put(b, "t\x00b", "t", "rb", item(1), now.Add(time.Second))
		s.get(b, "t\x00a", "ra", now.Add(2*time.Second)) // a is now the most recent
		s.Put(b, "t\x00c", "t", "rc", item(1), now.Add(3*time.Second))
		if _, ok := s.get(b, "t\x00b", "rb", now.Add(4*time.Second)); ok {
			t.Error("b, the least recently used, survived")
		}
		for _, k := range []string{"a", "c"} {
			if _, ok := s.get(b, "t\x00"+k, "r"+k, now.Add(4*time.Second)); !ok {
				t.Errorf("%s was evicted", k)
			}
		}
		if st.Sessions.Load() != 2 {
			t.Errorf("sessions gauge %d", st.Sessions.Load())
		}
	})
	t.Run("max_transcript_bytes forgets a session's oldest chains", func(t *testing.T) {
		var st Stats
		s := NewSessions(&st)
		b := bounds()
		b.MaxTranscriptBytes = 1000
		s.Put(b, "t\x00a", "t", "r1", item(500), now)
		s.Put(b, "t\x00a", "t", "r2", item(500), now)
		if _, ok := s.get(b, "t\x00a", "r1", now); ok {
			t.Error("r1 survived past the session's bytes")
		}
		if _, ok := s.get(b, "t\x00a", "r2", now); !ok {
			t.Error("the newest chain was forgotten")
		}
		if got := st.TranscriptBytes.Load(); got > 1000 || got < 400 {
			t.Errorf("bytes gauge %d", got)
		}
	})
	t.Run("max_total_transcript_bytes forgets other sessions", func(t *testing.T) {
		var st Stats
		s := NewSessions(&st)
		b := bounds()
		b.MaxTotalTranscriptBytes = 1000
		s.Put(b, "t\x00a", "t", "ra", item(400), now)
		s.Put(b, "u\x00b", "u", "rb", item(400), now)
		s.Put(b, "u\x00c", "u", "rc", item(400), now)
		if _, ok := s.get(b, "t\x00a", "ra", now); ok {
			t.Error("the oldest session survived past the total")
		}
		if st.Sessions.Load() != 2 || st.TranscriptBytes.Load() > 1000 {
			t.Errorf("sessions %d bytes %d", st.Sessions.Load(), st.TranscriptBytes.Load())
		}
	})
	t.Run("session_ttl forgets unused sessions", func(t *testing.T) {
		var st Stats
		s := NewSessions(&st)
		b := bounds()
		s.Put(b, "t\x00a", "t", "ra", item(1), now)
		s.Put(b, "t\x00b", "t", "rb", item(1), now.Add(30*time.Minute))
		s.Expire(b.SessionTTL.D(), now.Add(61*time.Minute))
		if st.Sessions.Load() != 1 {
			t.Fatalf("sessions %d after a's ttl", st.Sessions.Load())
		}
		if _, ok := s.get(b, "t\x00b", "rb", now.Add(89*time.Minute)); !ok {
			t.Error("b expired early")
		}
		// The read renewed b; an hour after it, b goes too.
		if _, ok := s.get(b, "t\x00b", "rb", now.Add(149*time.Minute)); ok {
			t.Error("b outlived its ttl")
		}
		if st.Sessions.Load() != 0 || st.TranscriptBytes.Load() != 0 {
			t.Errorf("sessions %d bytes %d", st.Sessions.Load(), st.TranscriptBytes.Load())
		}
	})
}
