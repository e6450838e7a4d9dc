package engine_test

import (
	"github.com/ccload/ccload/ccloadtest/mockupstream"

	"crypto/sha256"
	"encoding/hex"
)

func sha256hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func mockOptions() mockupstream.Options { return mockupstream.Options{} }
