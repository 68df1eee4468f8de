// Command crdvalidation-oracle answers "does the API server accept this CRD?" with the real
// upstream code: apiextensions-apiserver v0.37.2's create path for a
// CustomResourceDefinition (apiextensions.k8s.io/v1).
//
// It reads one CRD v1 JSON document per line on stdin and writes exactly one JSON line per
// input line, in order:
//
//	{"errors":[{"field":"spec.group","type":"Invalid value","detail":"...","message":"..."}],
//	 "warnings":["..."],"decode":"<decode error, if the body does not decode>"}
//
// Each document goes the way a POST body goes: decoded case-sensitively into the v1 type
// (sigs.k8s.io/json, as the API server's JSON serializer), defaulted by the scheme
// (SetDefaults_CustomResourceDefinition), converted to the internal type
// (Convert_v1_CustomResourceDefinitionSpec_To_apiextensions_..., which moves identical
// per-version schemas to spec.validation), then the registry strategy's PrepareForCreate,
// Validate (validation.ValidateCustomResourceDefinition) and WarningsOnCreate.
//
// It is a Go module: go.mod pins k8s.io/apiextensions-apiserver v0.37.2. Build it with
// conformance/build.py (build(sources=...)), which caches the binary per hash of its sources.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime/debug"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresourcedefinition"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kjson "sigs.k8s.io/json"
)

type problem struct {
	Field   string `json:"field"`
	Type    string `json:"type"`
	Detail  string `json:"detail"`
	Message string `json:"message"`
}

type answer struct {
	Errors   []problem `json:"errors"`
	Warnings []string  `json:"warnings"`
	Decode   string    `json:"decode,omitempty"`
	Panic    string    `json:"panic,omitempty"`
}

var scheme = runtime.NewScheme()

func init() {
	install.Install(scheme)
}

func check(line []byte) (out answer) {
	out.Errors = []problem{}
	out.Warnings = []string{}
	defer func() {
		if r := recover(); r != nil {
			out.Panic = fmt.Sprintf("%v\n%s", r, debug.Stack())
		}
	}()
	v1 := &apiextensionsv1.CustomResourceDefinition{}
	strict, err := kjson.UnmarshalStrict(line, v1, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	if err != nil {
		out.Decode = err.Error()
		return out
	}
	for _, e := range strict {
		out.Warnings = append(out.Warnings, "unknown field: "+e.Error())
	}
	scheme.Default(v1)
	crd := &apiextensions.CustomResourceDefinition{}
	if err := scheme.Convert(v1, crd, nil); err != nil {
		out.Decode = "conversion: " + err.Error()
		return out
	}
	ctx := context.Background()
	strategy := customresourcedefinition.NewStrategy(scheme)
	strategy.PrepareForCreate(ctx, crd)
	errs := strategy.Validate(ctx, crd)
	for _, e := range errs {
		out.Errors = append(out.Errors, describe(e))
	}
	out.Warnings = append(out.Warnings, strategy.WarningsOnCreate(ctx, crd)...)
	return out
}

func describe(e *field.Error) problem {
	return problem{Field: e.Field, Type: e.Type.String(), Detail: e.Detail, Message: e.Error()}
}

func main() {
	in := bufio.NewReader(os.Stdin)
	w := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 && !(len(line) == 1 && line[0] == '\n') {
			_ = enc.Encode(check(line))
			_ = w.Flush()
		}
		if err != nil {
			break
		}
	}
}
