package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine"
)

// chatTarget is one channel × model that `check --chat` talks to.
type chatTarget struct {
	channel, model string
}

// chatTargets reduces the probe plan to one chat per channel and model:
// routing picks the key and URL, as it does for a client.
func chatTargets(plan []checkProbe) []chatTarget {
	var out []chatTarget
	seen := map[chatTarget]bool{}
	for _, p := range plan {
		t := chatTarget{p.Channel.Name, p.Model.Name}
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// runChats sends the --chat prompt to each target in turn through a
// throwaway engine over snap, the normal request path of serve (routing
// restricted to the target's channel), printing the answer to stdout as it
// streams and a line with the outcome after it. Any failed chat makes the
// run fail (exit 1).
func runChats(opts *CheckOptions, snap *config.Snapshot, plan []checkProbe) error {
	if opts.JSON {
		return &exitError{code: exitUsage, err: errors.New("--chat prints the answers as text; it cannot be combined with --json")}
	}
	targets := chatTargets(plan)
	if len(targets) == 0 {
		fmt.Fprintf(opts.IO.Err, "%s: valid; no enabled channel with an enabled model to chat with\n", opts.Config)
		return nil
	}
	eng := engine.New(engine.Options{Config: staticConfig{snap}, Logger: slog.New(slog.DiscardHandler)})
	failed := 0
	for _, t := range targets {
		fmt.Fprintf(opts.IO.Out, "== %s / %s\n", t.channel, t.model)
		ctx, cancel := context.WithTimeout(context.Background(), opts.Timeout)
		res := eng.RunChatTest(ctx, engine.ChatTest{Channel: t.channel, Model: t.model, Prompt: opts.Chat},
			func(text string) error {
				_, err := io.WriteString(opts.IO.Out, text)
				return err
			})
		cancel()
		fmt.Fprintln(opts.IO.Out)
		if res.OK {
			fmt.Fprintf(opts.IO.Out, "-- ok: %d via %s (%s), %d attempt(s), first token %s, total %s\n",
				res.Status, res.Protocol, res.Key, res.Attempts, fmtMs(res.TTFBMs), fmtMs(res.DurationMs))
			continue
		}
		failed++
		fmt.Fprintf(opts.IO.Out, "-- failed: %d %s\n", res.Status, oneLine(res.Error))
	}
	if failed > 0 {
		return &exitError{code: exitFail, err: fmt.Errorf("%d of %d chat(s) failed", failed, len(targets))}
	}
	return nil
}
