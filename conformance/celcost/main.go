// Command celcostoracle reports what the API server computes for the cost of
// x-kubernetes-validations rules: k8s.io/apiextensions-apiserver v0.37.2, the cel-go it pins.
//
// One JSON object per stdin line, one per stdout line:
//
//   - {"op": "compile", "schema": <openAPIV3Schema node>, "rule": "...", "root": bool,
//     "messageExpression": "...", "optionalOldSelf": bool}: the node is converted as the
//     API server converts a CRD version's schema (v1 -> internal, NewStructural), its CEL
//     declaration built by model.SchemaDeclType (root, or an embedded resource: with
//     apiVersion/kind/metadata), and the rule compiled by apiextensions' cel.Compile with
//     celconfig.PerCallLimit in the base environment (StoredExpressions). Answer:
//     {"cost": MaxCost, "cardinality": MaxCardinality, "error": Error.Detail,
//     "messageCost": ..., "messageError": ..., "usesOldSelf": bool}.
//   - {"op": "crd", "schema": <openAPIV3Schema>}: a CRD with that schema is validated by
//     validation.ValidateCustomResourceDefinition (a create) and every error is returned as
//     {"errors": ["<field path>: <detail>", ...]}: the per-rule and per-CRD cost refusals,
//     with the cardinality of the enclosing lists and maps, in the server's words.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime/debug"
	"sort"
	"strings"

	celgo "github.com/google/cel-go/cel"
	celtypes "github.com/google/cel-go/common/types"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/version"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"
)

type request struct {
	Op                string          `json:"op"`
	Schema            json.RawMessage `json:"schema"`
	Rule              string          `json:"rule"`
	Root              bool            `json:"root"`
	MessageExpression string          `json:"messageExpression"`
	OptionalOldSelf   bool            `json:"optionalOldSelf"`
}

type response struct {
	Cost         *uint64  `json:"cost,omitempty"`
	Cardinality  *uint64  `json:"cardinality,omitempty"`
	Error        string   `json:"error,omitempty"`
	MessageCost  *uint64  `json:"messageCost,omitempty"`
	MessageError string   `json:"messageError,omitempty"`
	UsesOldSelf  bool     `json:"usesOldSelf,omitempty"`
	Errors       []string `json:"errors,omitempty"`
	Fatal        string   `json:"fatal,omitempty"`
	Decls        []string `json:"decls,omitempty"`
}

var envSet = environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion())

func internalSchema(raw json.RawMessage) (*apiextensions.JSONSchemaProps, error) {
	v1 := &apiextensionsv1.JSONSchemaProps{}
	if err := json.Unmarshal(raw, v1); err != nil {
		return nil, err
	}
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v1, internal, nil); err != nil {
		return nil, err
	}
	return internal, nil
}

func compile(req request) (resp response) {
	internal, err := internalSchema(req.Schema)
	if err != nil {
		return response{Fatal: err.Error()}
	}
	rule := apiextensions.ValidationRule{Rule: req.Rule, MessageExpression: req.MessageExpression}
	if req.OptionalOldSelf {
		yes := true
		rule.OptionalOldSelf = &yes
	}
	internal.XValidations = apiextensions.ValidationRules{rule}
	s, err := structuralschema.NewStructural(internal)
	if err != nil {
		return response{Fatal: "NewStructural: " + err.Error()}
	}
	decl := model.SchemaDeclType(s, req.Root || s.XEmbeddedResource)
	if decl == nil {
		return response{Fatal: "no CEL declaration for this schema"}
	}
	results, err := cel.Compile(s, decl, celconfig.PerCallLimit, envSet, cel.StoredExpressionsEnvLoader())
	if err != nil {
		return response{Fatal: err.Error()}
	}
	r := results[0]
	resp.Cost, resp.Cardinality = &r.MaxCost, &r.MaxCardinality
	if r.Error != nil {
		resp.Error = r.Error.Detail
	}
	if r.MessageExpressionError != nil {
		resp.MessageError = r.MessageExpressionError.Detail
	}
	if req.MessageExpression != "" && r.MessageExpression != nil {
		resp.MessageCost = &r.MessageExpressionMaxCost
	}
	resp.UsesOldSelf = r.UsesOldSelf
	return resp
}

func crd(req request) response {
	internal, err := internalSchema(req.Schema)
	if err != nil {
		return response{Fatal: err.Error()}
	}
	preserve := false
	obj := &apiextensions.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com", ResourceVersion: "1"},
		Spec: apiextensions.CustomResourceDefinitionSpec{
			Group: "example.com",
			Names: apiextensions.CustomResourceDefinitionNames{
				Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Scope:                 apiextensions.NamespaceScoped,
			Versions:              []apiextensions.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true}},
			Validation:            &apiextensions.CustomResourceValidation{OpenAPIV3Schema: internal},
			PreserveUnknownFields: &preserve,
			Conversion:            &apiextensions.CustomResourceConversion{Strategy: apiextensions.NoneConverter},
		},
		Status: apiextensions.CustomResourceDefinitionStatus{StoredVersions: []string{"v1"}},
	}
	errs := validation.ValidateCustomResourceDefinition(context.Background(), obj)
	out := response{Errors: []string{}}
	for _, e := range errs {
		out.Errors = append(out.Errors, fmt.Sprintf("%s: %s", e.Field, e.ErrorBody()))
	}
	return out
}

func handle(req request) (resp response) {
	defer func() {
		if p := recover(); p != nil {
			resp = response{Fatal: fmt.Sprintf("panic: %v\n%s", p, debug.Stack())}
		}
	}()
	switch req.Op {
	case "compile":
		return compile(req)
	case "crd":
		return crd(req)
	case "decls":
		return decls()
	}
	return response{Fatal: "unknown op " + req.Op}
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<28)
	out := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	for in.Scan() {
		var req request
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			fmt.Fprintln(os.Stderr, "celcostoracle: bad request:", err)
			os.Exit(2)
		}
		if err := enc.Encode(handle(req)); err != nil {
			os.Exit(2)
		}
		if err := out.Flush(); err != nil {
			os.Exit(2)
		}
	}
}

// decls lists every function overload of the StoredExpressions environment (with self
// declared), one line each: "name id member(0/1) arg;arg;... -> result", and every macro
// as "macro name argcount receiver-style(0/1)" (-1 for a variadic one).
func decls() response {
	e, err := envSet.Extend(environment.VersionedOptions{
		IntroducedVersion: version.MajorMinor(1, 0),
		EnvOptions:        []celgo.EnvOption{celgo.Variable("self", celgo.DynType)}})
	if err != nil {
		return response{Fatal: err.Error()}
	}
	env := e.StoredExpressionsEnv()
	var out []string
	for name, fn := range env.Functions() {
		for _, o := range fn.OverloadDecls() {
			var args []string
			for _, a := range o.ArgTypes() {
				args = append(args, typeName(a))
			}
			member := 0
			if o.IsMemberFunction() {
				member = 1
			}
			out = append(out, fmt.Sprintf("%s %s %d %s -> %s", name, o.ID(), member,
				strings.Join(args, ";"), typeName(o.ResultType())))
		}
	}
	for _, m := range env.Macros() {
		recv := 0
		if m.IsReceiverStyle() {
			recv = 1
		}
		n := int(m.ArgCount())
		if strings.HasSuffix(m.MacroKey(), ":*:"+strings.TrimPrefix(m.MacroKey()[len(m.Function())+1:], "*:")) {
			n = -1
		}
		out = append(out, fmt.Sprintf("macro %s %d %d", m.Function(), n, recv))
	}
	sort.Strings(out)
	return response{Decls: out}
}

func typeName(t *celtypes.Type) string {
	return t.String()
}
