//go:build strfmt_only

package main

import (
	"errors"

	"k8s.io/kube-openapi/pkg/validation/strfmt"
)

// formatVerdict is what kube-openapi's formatValidator does for a string: a known format
// must validate (FormatOf), an unknown one does not apply.
func formatVerdict(typ, format string, value interface{}) (bool, error) {
	text, ok := value.(string)
	if !ok {
		return false, errors.New("numbers need the validate package: build without -tags strfmt_only")
	}
	if format == "" || !strfmt.Default.ContainsName(format) {
		return true, nil
	}
	return strfmt.Default.Validates(format, text), nil
}
