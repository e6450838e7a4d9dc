package cmd

import (
	"testing"

	"github.com/ccload/ccload/admin/adminapi"
)

func TestDetectNote(t *testing.T) {
	relay := adminapi.URLView{URL: "https://relay.example.com/api", Detected: []adminapi.DetectionView{
		{Client: "openai", Protocol: "anthropic"}, {Client: "gemini"},
	}}
	plainURL := adminapi.URLView{URL: "https://api.example.com"}
	cases := []struct {
		name       string
		urls       []adminapi.URLView
		tty, plain string
	}{
		{name: "nothing learned", urls: []adminapi.URLView{plainURL}},
		{name: "one url", urls: []adminapi.URLView{relay},
			tty:   "detected openai->anthropic\ndetected gemini->none",
			plain: "detected:https://relay.example.com/api:openai:anthropic, detected:https://relay.example.com/api:gemini:none"},
		{name: "several urls name the host", urls: []adminapi.URLView{plainURL, relay},
			tty:   "detected relay.example.com openai->anthropic\ndetected relay.example.com gemini->none",
			plain: "detected:https://relay.example.com/api:openai:anthropic, detected:https://relay.example.com/api:gemini:none"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ch := adminapi.Channel{ChannelConfig: adminapi.ChannelConfig{URLs: c.urls}}
			if got := detectNote(ch, true); got != c.tty {
				t.Errorf("tty: %q, want %q", got, c.tty)
			}
			if got := detectNote(ch, false); got != c.plain {
				t.Errorf("plain: %q, want %q", got, c.plain)
			}
		})
	}
}
