package main

import (
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"
)

// formatVerdict is the API server's verdict on value for a field of type typ whose
// (already stripped) format is format: kube-openapi's validate.NewSchemaValidator with
// strfmt.Default, as apiextensions-apiserver's customresource validation runs it. For a
// number that is the type check (typeValidator: an integral float64 is an integer only
// within +-(2^53-1), swag's IsFloat64AJSONInteger) and the range check of its format
// (numberValidator, validate.IsValueValidAgainstRange); for a string, the format.
func formatVerdict(typ, format string, value interface{}) (bool, error) {
	schema := spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{typ}, Format: format}}
	return validate.NewSchemaValidator(&schema, nil, "", strfmt.Default).Validate(value).IsValid(), nil
}
