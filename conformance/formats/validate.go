//go:build !strfmt_only

package main

import (
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"
)

// formatVerdict is the format part of the API server's verdict on value, for a field of
// type typ whose (already stripped) format is format.
func formatVerdict(typ, format string, value interface{}) (bool, error) {
	switch value.(type) {
	case string:
		schema := spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{typ}, Format: format}}
		return validate.NewSchemaValidator(&schema, nil, "", strfmt.Default).Validate(value).IsValid(), nil
	case int64, float64:
		// Only the range check: the type check (say, an integral float beyond 2^53 for
		// type integer) is not a format verdict.
		if format == "" {
			return true, nil
		}
		return validate.IsValueValidAgainstRange(value, typ, format, "Checked", "value") == nil, nil
	}
	return true, nil
}
