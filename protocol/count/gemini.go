package count

import (
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// Gemini counts text with o200k_base as is: Google's published examples come
// out within a few tokens (doc.go), so no factor is applied.
const geminiFactor = 1.0

// Structural costs of a Gemini request, in Gemini tokens.
const (
	// geminiPerContent is charged for each content after the first: a single
	// prompt counts exactly its text, multi-turn examples a token or two more
	// per turn (fitted; reference table in doc.go).
	geminiPerContent = 1
	// geminiImage is the cost of one image up to Gemini 2.x: 258 tokens ("Tell
	// me about this image" plus a photo counts 263, Gemini API token guide).
	geminiImage = 258
	// geminiPerFunction is assumed (not calibrated): wrapping of one
	// function declaration.
	geminiPerFunction = 4
	// Audio is 32 tokens per second and video 263 (Gemini API token guide);
	// the duration of inline media is estimated from its size at these byte
	// rates (128 kbit/s audio, 8 Mbit/s video).
	geminiAudioPerSec  = 32
	geminiVideoPerSec  = 263
	geminiAudioBytesPS = 16000
	geminiVideoBytesPS = 1000000
)

// Gemini 3 media resolution, tokens per image (or PDF page) by level; an
// unset level is taken as high for images and medium for PDF pages, the
// settings Google recommends (Gemini 3 developer guide, "Media resolution").
var gemini3Media = map[string]int{
	"MEDIA_RESOLUTION_LOW":        280,
	"MEDIA_RESOLUTION_MEDIUM":     560,
	"MEDIA_RESOLUTION_HIGH":       1120,
	"MEDIA_RESOLUTION_ULTRA_HIGH": 2240,
}

// Gemini counts a Gemini countTokens body and returns totalTokens. The body
// holds either contents, or a whole generateContentRequest (contents,
// systemInstruction, tools) whose system instruction and tools count too; a
// generateContent body is accepted as well. model is the model from the path
// (models/{model}:countTokens); it chooses the media costs. It fails with
// ErrInvalid, naming the field, when the body is not such a request.
func Gemini(model string, body []byte) (int, error) {
	b := encoder()
	root, err := parseObject(body)
	if err != nil {
		return 0, err
	}
	req, path := root, ""
	if g := geminiGet(root, "generateContentRequest", "generate_content_request"); g.Exists() {
		if !g.IsObject() {
			return 0, invalid("generateContentRequest: want an object")
		}
		req, path = g, "generateContentRequest."
	}
	if m := req.Get("model").Str; m != "" && model == "" {
		model = m
	}
	g := geminiCounter{tally: tally{b: b}, model: parseModel(model)}
	g.resolution = geminiGet(req, "generationConfig", "generation_config").Get("mediaResolution").Str
	if g.resolution == "" {
		g.resolution = geminiGet(req, "generationConfig", "generation_config").Get("media_resolution").Str
	}

	if si := geminiGet(req, "systemInstruction", "system_instruction"); si.Exists() && si.Type != gjson.Null {
		if err := g.content(si, path+"systemInstruction"); err != nil {
			return 0, err
		}
	}
	if err := g.tools(geminiGet(req, "tools", "tools"), path+"tools"); err != nil {
		return 0, err
	}
	contents := req.Get("contents")
	if !contents.IsArray() {
		return 0, invalid("%scontents: want an array", path)
	}
	for i, c := range contents.Array() {
		if err := g.content(c, path+"contents["+strconv.Itoa(i)+"]"); err != nil {
			return 0, err
		}
		if i > 0 {
			g.fixed += geminiPerContent
		}
	}
	return g.total(geminiFactor), nil
}

type geminiCounter struct {
	tally
	model      modelID
	resolution string // generationConfig.mediaResolution
}

// geminiGet reads a field by its JSON (camelCase) or proto (snake_case) name;
// the API accepts both.
func geminiGet(v gjson.Result, camel, snake string) gjson.Result {
	if r := v.Get(camel); r.Exists() {
		return r
	}
	return v.Get(snake)
}

func (g *geminiCounter) content(c gjson.Result, path string) error {
	if !c.IsObject() {
		return invalid("%s: want an object", path)
	}
	parts := c.Get("parts")
	if !parts.Exists() || parts.Type == gjson.Null {
		return nil
	}
	if !parts.IsArray() {
		return invalid("%s.parts: want an array", path)
	}
	for j, p := range parts.Array() {
		if !p.IsObject() {
			return invalid("%s.parts[%d]: want an object", path, j)
		}
		g.part(p)
	}
	return nil
}

func (g *geminiCounter) part(p gjson.Result) {
	level := geminiGet(p, "mediaResolution", "media_resolution").Get("level").Str
	switch {
	case p.Get("text").Exists():
		g.addText(p.Get("text").Str)
	case geminiGet(p, "inlineData", "inline_data").Exists():
		blob := geminiGet(p, "inlineData", "inline_data")
		g.blob(geminiGet(blob, "mimeType", "mime_type").Str, blob.Get("data").Str, level)
	case geminiGet(p, "fileData", "file_data").Exists():
		fd := geminiGet(p, "fileData", "file_data")
		g.blob(geminiGet(fd, "mimeType", "mime_type").Str, "", level)
	case geminiGet(p, "functionCall", "function_call").Exists():
		fc := geminiGet(p, "functionCall", "function_call")
		g.addText(fc.Get("name").Str)
		g.addJSON(fc.Get("args"))
	case geminiGet(p, "functionResponse", "function_response").Exists():
		fr := geminiGet(p, "functionResponse", "function_response")
		g.addText(fr.Get("name").Str)
		g.addJSON(fr.Get("response"))
		fr.Get("parts").ForEach(func(_, inner gjson.Result) bool {
			if inner.IsObject() {
				g.part(inner)
			}
			return true
		})
	case geminiGet(p, "executableCode", "executable_code").Exists():
		g.addText(geminiGet(p, "executableCode", "executable_code").Get("code").Str)
	case geminiGet(p, "codeExecutionResult", "code_execution_result").Exists():
		g.addText(geminiGet(p, "codeExecutionResult", "code_execution_result").Get("output").Str)
	default: // thoughtSignature-only parts, future part types
		g.addStrings(p)
	}
}

// blob is the cost of media. data is base64, or "" for a file reference.
func (g *geminiCounter) blob(mime, data, level string) {
	switch {
	case strings.HasPrefix(mime, "image/"):
		g.fixed += g.mediaTokens(level, "MEDIA_RESOLUTION_HIGH")
	case mime == "application/pdf":
		pages := 1
		if data != "" {
			pages = pdfPages(data)
		}
		g.fixed += pages * g.mediaTokens(level, "MEDIA_RESOLUTION_MEDIUM")
	case strings.HasPrefix(mime, "text/") && data != "":
		if text, err := base64.StdEncoding.DecodeString(data); err == nil {
			g.addText(string(text))
		}
	case strings.HasPrefix(mime, "audio/"):
		g.fixed += max(1, b64Len(data)/geminiAudioBytesPS) * geminiAudioPerSec
	case strings.HasPrefix(mime, "video/"):
		g.fixed += max(1, b64Len(data)/geminiVideoBytesPS) * geminiVideoPerSec
	default:
		g.fixed += geminiImage
	}
}

// mediaTokens is the cost of one image or PDF page: 258 before Gemini 3,
// then by media resolution (the part's level, else the request's, else def).
func (g *geminiCounter) mediaTokens(level, def string) int {
	if g.model.major < 3 {
		return geminiImage
	}
	for _, l := range []string{level, g.resolution, def} {
		if n, ok := gemini3Media[l]; ok {
			return n
		}
	}
	return gemini3Media[def]
}

// tools counts function declarations as their compact JSON (name,
// description, parameters) plus geminiPerFunction; built-in tools
// (googleSearch, codeExecution, ...) as their compact JSON.
func (g *geminiCounter) tools(v gjson.Result, path string) error {
	if !v.Exists() || v.Type == gjson.Null {
		return nil
	}
	if !v.IsArray() {
		return invalid("%s: want an array", path)
	}
	for i, tool := range v.Array() {
		if !tool.IsObject() {
			return invalid("%s[%d]: want an object", path, i)
		}
		tool.ForEach(func(k, x gjson.Result) bool {
			switch k.Str {
			case "functionDeclarations", "function_declarations":
				x.ForEach(func(_, fn gjson.Result) bool {
					g.fixed += geminiPerFunction
					g.addJSON(fn)
					return true
				})
			default:
				g.addText(k.Str)
				g.addJSON(x)
			}
			return true
		})
	}
	return nil
}
