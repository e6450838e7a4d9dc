package mockupstream

import (
	"strings"
	"time"
)

// listedModels are the models the list endpoints show. The mock serves any
// model name; these are only what a client browsing the list sees.
var listedModels = []string{
	"claude-opus-4-6", "claude-sonnet-4-6", "claude-haiku-4-5",
	"gpt-5", "gpt-5-mini", "gpt-5-codex",
	"gemini-2.5-pro", "gemini-2.5-flash",
}

// modelList renders the family's model list.
func modelList(family string, now time.Time) []byte {
	switch family {
	case Anthropic:
		type model struct {
			Type        string `json:"type"`
			ID          string `json:"id"`
			DisplayName string `json:"display_name"`
			CreatedAt   string `json:"created_at"`
		}
		data := make([]model, len(listedModels))
		for i, m := range listedModels {
			data[i] = model{"model", m, m, now.UTC().Format(time.RFC3339)}
		}
		return jsonOf(struct {
			Data    []model `json:"data"`
			HasMore bool    `json:"has_more"`
			FirstID string  `json:"first_id"`
			LastID  string  `json:"last_id"`
		}{data, false, listedModels[0], listedModels[len(listedModels)-1]})
	case Gemini:
		type model struct {
			Name                       string   `json:"name"`
			Version                    string   `json:"version"`
			DisplayName                string   `json:"displayName"`
			InputTokenLimit            int      `json:"inputTokenLimit"`
			OutputTokenLimit           int      `json:"outputTokenLimit"`
			SupportedGenerationMethods []string `json:"supportedGenerationMethods"`
		}
		var data []model
		for _, m := range listedModels {
			if strings.HasPrefix(m, "gemini-") {
				data = append(data, model{"models/" + m, "001", m, 1048576, 65536,
					[]string{"generateContent", "countTokens", "streamGenerateContent"}})
			}
		}
		return jsonOf(struct {
			Models []model `json:"models"`
		}{data})
	}
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	data := make([]model, len(listedModels))
	for i, m := range listedModels {
		data[i] = model{m, "model", now.Unix(), "ccload-mock"}
	}
	return jsonOf(struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{"list", data})
}

// tokenCount answers a count-tokens request with a deterministic estimate
// (a quarter of the body length).
func tokenCount(family string, body []byte) []byte {
	n := max(1, len(body)/4)
	if family == Gemini {
		return jsonOf(struct {
			TotalTokens int `json:"totalTokens"`
		}{n})
	}
	return jsonOf(struct {
		InputTokens int `json:"input_tokens"`
	}{n})
}
