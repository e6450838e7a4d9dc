package importer

import (
	"regexp"
	"slices"
	"strings"

	"github.com/ccload/ccload/config"
)

// varRef matches the start of a ${VAR} or ${VAR:-default} reference; an
// escaped "$${" is skipped by Vars.
var varRef = regexp.MustCompile(`\$+\{([A-Za-z_][A-Za-z0-9_]*)`)

// Vars lists the environment variables a rendered file references, sorted
// and without duplicates.
func Vars(yaml []byte) []string {
	var out []string
	for _, m := range varRef.FindAllSubmatch(yaml, -1) {
		dollars := len(m[0]) - len(m[1]) - 1
		if dollars%2 == 1 && !slices.Contains(out, string(m[1])) {
			out = append(out, string(m[1]))
		}
	}
	slices.Sort(out)
	return out
}

// PlaceholderEnv gives every variable a distinct value that passes as a
// key, a password and a URL, so a file can be checked without the real
// secrets: NAME_KEY -> https://name-key.invalid.
// SecretKeyVar is the variable an imported file's server.secret_key names.
const SecretKeyVar = "CCLOAD_SECRET_KEY"

func PlaceholderEnv() config.Env {
	return config.Env{Lookup: func(name string) (string, bool) {
		if name == SecretKeyVar {
			return strings.Repeat("0", 64), true // a well-formed key
		}
		return "https://" + strings.ToLower(strings.ReplaceAll(name, "_", "-")) + ".invalid", true
	}}
}

// Validate loads a rendered file with the real config loader, every
// referenced variable set to a placeholder: what `ccload check --offline`
// does once the variables are set. The error is a config.Problems.
func Validate(file string, yaml []byte) error {
	_, err := config.Parse(file, yaml, PlaceholderEnv())
	return err
}
