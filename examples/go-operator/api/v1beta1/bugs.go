package v1beta1

import (
	"os"
	"strings"
)

// bug reports whether the seeded conversion bug name is switched on, i.e.
// listed in the comma-separated environment variable SHIPYARD_BUG. It reads
// the variable on every call so that tests can switch bugs with t.Setenv.
func bug(name string) bool {
	for _, b := range strings.Split(os.Getenv("SHIPYARD_BUG"), ",") {
		if strings.TrimSpace(b) == name {
			return true
		}
	}
	return false
}
