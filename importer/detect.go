package importer

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/ccload/ccload/config/yamlnode"
)

// ErrUnknownFormat is returned by Detect for content it cannot place.
var ErrUnknownFormat = errors.New("unknown format: want a ccLoad channel CSV export or a LiteLLM config.yaml with model_list")

// Detect tells the format from the content, not the file name: a CSV
// whose header has ccLoad's name column and its urls, api_key or models
// column, or a YAML mapping with model_list.
func Detect(data []byte) (Format, error) {
	body := bytes.TrimLeft(bytes.TrimPrefix(data, []byte("\ufeff")), "\r\n")
	if line, _, _ := bytes.Cut(body, []byte("\n")); len(line) > 0 {
		r := csv.NewReader(bytes.NewReader(line))
		r.LazyQuotes = true
		if header, err := r.Read(); err == nil && len(header) > 1 {
			cols := map[string]bool{}
			for _, h := range header {
				cols[csvColumn(h)] = true
			}
			if cols["name"] && (cols["urls"] || cols["api_key"] || cols["models"]) {
				return FormatCCLoadCSV, nil
			}
		}
	}
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) == nil && len(doc.Content) > 0 && yamlnode.Get(yamlnode.Pairs(doc.Content[0]), "model_list") != nil {
		return FormatLiteLLM, nil
	}
	return "", ErrUnknownFormat
}

// Read converts data in the given format, detecting it when format is "".
func Read(data []byte, format Format) (*Config, error) {
	if format == "" {
		f, err := Detect(data)
		if err != nil {
			return nil, err
		}
		format = f
	}
	switch format {
	case FormatCCLoadCSV:
		return ReadCCLoadCSV(data)
	case FormatLiteLLM:
		return ReadLiteLLM(data)
	}
	return nil, fmt.Errorf("unknown format %q (want ccload-csv or litellm)", format)
}
