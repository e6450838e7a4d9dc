package mockupstream

import "encoding/json"

// Gemini generateContent: https://ai.google.dev/api/generate-content (the
// GenerateContentResponse, also each chunk of streamGenerateContent?alt=sse).

type gemResponse struct {
	Candidates    []gemCandidate `json:"candidates"`
	UsageMetadata gemUsage       `json:"usageMetadata"`
	ModelVersion  string         `json:"modelVersion"`
	ResponseID    string         `json:"responseId"`
}

type gemCandidate struct {
	Content      gemContent `json:"content"`
	FinishReason string     `json:"finishReason,omitempty"`
	Index        int        `json:"index"`
}

type gemContent struct {
	Parts []gemPart `json:"parts"`
	Role  string    `json:"role"`
}

type gemPart struct {
	Text             string           `json:"text,omitempty"`
	Thought          bool             `json:"thought,omitempty"`
	FunctionCall     *gemFunctionCall `json:"functionCall,omitempty"`
	ThoughtSignature string           `json:"thoughtSignature,omitempty"`
}

type gemFunctionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

type gemUsage struct {
	PromptTokenCount        int           `json:"promptTokenCount"`
	CandidatesTokenCount    int           `json:"candidatesTokenCount,omitempty"`
	TotalTokenCount         int           `json:"totalTokenCount"`
	CachedContentTokenCount int           `json:"cachedContentTokenCount,omitempty"`
	PromptTokensDetails     []gemModality `json:"promptTokensDetails,omitempty"`
	CacheTokensDetails      []gemModality `json:"cacheTokensDetails,omitempty"`
	ThoughtsTokenCount      int           `json:"thoughtsTokenCount,omitempty"`
}

type gemModality struct {
	Modality   string `json:"modality"`
	TokenCount int    `json:"tokenCount"`
}

// gemFinalUsage is the usage of the whole reply: candidatesTokenCount
// excludes the thoughts, totalTokenCount includes them.
func gemFinalUsage(u Usage) gemUsage {
	g := gemUsage{
		PromptTokenCount:        u.prompt(),
		CandidatesTokenCount:    max(0, u.Output-u.Reasoning),
		TotalTokenCount:         u.prompt() + u.Output,
		CachedContentTokenCount: u.CacheRead,
		PromptTokensDetails:     []gemModality{{"TEXT", u.prompt()}},
		ThoughtsTokenCount:      u.Reasoning,
	}
	if u.CacheRead > 0 {
		g.CacheTokensDetails = []gemModality{{"TEXT", u.CacheRead}}
	}
	return g
}

// gemPartialUsage is the usage Gemini repeats on the chunks before the last:
// cumulative, the prompt known, the candidates not yet.
func gemPartialUsage(u Usage) gemUsage {
	return gemUsage{PromptTokenCount: u.prompt(), TotalTokenCount: u.prompt(), CachedContentTokenCount: u.CacheRead}
}

func gemFinishReason(rep *Reply) string {
	if rep.StopReason != "" {
		return rep.StopReason
	}
	return "STOP" // also after function calls: Gemini has no tool-use reason
}

// gemChunks returns the parts of the reply grouped as the stream sends them:
// one chunk per thought or text piece, one chunk with every function call.
// The signature rides on the first function call, as Gemini 3 puts it, else
// on the last thought part, or on the first part when there is no thought
// text.
func gemChunks(rep *Reply) [][]gemPart {
	var chunks [][]gemPart
	for _, p := range textPieces(rep.Thinking) {
		chunks = append(chunks, []gemPart{{Text: p, Thought: true}})
	}
	for _, p := range textPieces(rep.Text) {
		chunks = append(chunks, []gemPart{{Text: p}})
	}
	if len(rep.ToolCalls) > 0 {
		calls := make([]gemPart, len(rep.ToolCalls))
		for i, c := range rep.ToolCalls {
			calls[i] = gemPart{FunctionCall: &gemFunctionCall{ID: c.ID, Name: c.Name, Args: objectArgs(c.Arguments)}}
		}
		chunks = append(chunks, calls)
	}
	if sig := geminiSignature(rep.ThinkingSignature); sig != "" && len(chunks) > 0 {
		at := 0
		switch n := len(textPieces(rep.Thinking)); {
		case len(rep.ToolCalls) > 0:
			at = len(chunks) - 1 // Gemini 3 signs the first function call
		case n > 0:
			at = n - 1
		}
		chunks[at][0].ThoughtSignature = sig
	}
	return chunks
}

func gemNew(t *turn, parts []gemPart, usage gemUsage) gemResponse {
	if parts == nil {
		parts = []gemPart{}
	}
	return gemResponse{
		Candidates:    []gemCandidate{{Content: gemContent{Parts: parts, Role: "model"}}},
		UsageMetadata: usage, ModelVersion: t.rec.Model, ResponseID: t.id("mock-"),
	}
}

func geminiBody(t *turn, rep *Reply) []byte {
	var parts []gemPart
	if rep.Thinking != "" {
		parts = append(parts, gemPart{Text: rep.Thinking, Thought: true})
	}
	if rep.Text != "" {
		parts = append(parts, gemPart{Text: rep.Text})
	}
	for _, c := range rep.ToolCalls {
		parts = append(parts, gemPart{FunctionCall: &gemFunctionCall{ID: c.ID, Name: c.Name, Args: objectArgs(c.Arguments)}})
	}
	if sig := geminiSignature(rep.ThinkingSignature); sig != "" && len(parts) > 0 {
		at := 0 // the thought part, or the first answer part
		if n := len(rep.ToolCalls); n > 0 {
			at = len(parts) - n // Gemini 3 signs the first function call
		}
		parts[at].ThoughtSignature = sig
	}
	r := gemNew(t, parts, gemFinalUsage(rep.Usage))
	r.Candidates[0].FinishReason = gemFinishReason(rep)
	return jsonOf(r)
}

// geminiEvents renders the stream: each chunk a whole GenerateContentResponse
// with the same responseId; the last carries finishReason and the final
// usageMetadata. There is no terminator event: the stream just ends.
func geminiEvents(t *turn, rep *Reply) [][]byte {
	chunks := gemChunks(rep)
	if len(chunks) == 0 {
		chunks = [][]gemPart{{{Text: ""}}}
	}
	out := make([][]byte, len(chunks))
	for i, parts := range chunks {
		r := gemNew(t, parts, gemPartialUsage(rep.Usage))
		if i == len(chunks)-1 {
			r.Candidates[0].FinishReason = gemFinishReason(rep)
			r.UsageMetadata = gemFinalUsage(rep.Usage)
		}
		out[i] = geminiEvent(jsonOf(r))
	}
	return out
}
