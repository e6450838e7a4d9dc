package main

import (
	"encoding/json"
	"testing"
)

// The agent request must be one a gateway admits: valid JSON, the bench
// model, not a stream, every tool_use answered, and agent-sized.
func TestAgentBodyIsAnAgentSizedRequest(t *testing.T) {
	body := agentBody(shapeJSON.model)
	var req struct {
		Model    string `json:"model"`
		Stream   bool   `json:"stream"`
		Tools    []any  `json:"tools"`
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type      string `json:"type"`
				ID        string `json:"id"`
				ToolUseID string `json:"tool_use_id"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if req.Model != shapeJSON.model || req.Stream || len(req.Tools) != 24 {
		t.Errorf("model %q, stream %v, %d tools", req.Model, req.Stream, len(req.Tools))
	}
	if n := len(body); n < 60<<10 || n > 100<<10 {
		t.Errorf("%d bytes, want about 80 KB", n)
	}
	open := map[string]bool{}
	for _, m := range req.Messages {
		for _, c := range m.Content {
			switch c.Type {
			case "tool_use":
				open[c.ID] = true
			case "tool_result":
				if !open[c.ToolUseID] {
					t.Errorf("tool_result for unknown %q", c.ToolUseID)
				}
				delete(open, c.ToolUseID)
			}
		}
	}
	if len(open) > 0 || req.Messages[len(req.Messages)-1].Role != "user" {
		t.Errorf("unanswered tool calls %v, last turn %q", open, req.Messages[len(req.Messages)-1].Role)
	}
}
