// Command apiserver-oracle answers compatfuzz's conformance questions with the real
// upstream Kubernetes code: apiextensions-apiserver's structural pruning, null pruning,
// defaulting and ObjectMeta coercion, and apimachinery's resource.Quantity.
//
// It reads JSON lines on stdin and writes exactly one JSON line per input line, in order:
//
//	{"op":"schema","key":"k","schema":{...openAPIV3Schema...}}
//	{"op":"prune"|"prune_nulls"|"default"|"coerce"|"decode","key":"k","object":...,
//	 "root":true,"drop_invalid":false}
//	{"op":"quantity","a":"1Gi","b":"1024Mi"}          (b optional)
//	{"op":"quantity_json","value":<any JSON value>}
//
// A schema is sent once under a key and prepared exactly as customresource_handler.go
// prepares a CRD version's schema (v1 -> internal conversion, NewStructural, DeepCopy,
// PruneDefaults); later lines name it by key. Objects are decoded with apimachinery's
// util/json, as the API server decodes an unstructured request body (case-sensitive
// keys, int64 for integers, float64 otherwise).
//
// It is a Go module: go.mod pins k8s.io/apiextensions-apiserver and k8s.io/apimachinery
// v0.37.2 (Kubernetes 1.37.2). Build it with conformance/build.py, which caches the
// binary per hash of main.go, go.mod, go.sum and the Go version.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"reflect"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	kjson "sigs.k8s.io/json"
)

type request struct {
	ID          json.RawMessage `json:"id,omitempty"`
	Op          string          `json:"op"`
	Key         string          `json:"key"`
	Schema      json.RawMessage `json:"schema"`
	Object      json.RawMessage `json:"object"`
	Root        *bool           `json:"root"`
	DropInvalid bool            `json:"drop_invalid"`
	A           *string         `json:"a"`
	B           *string         `json:"b"`
	Value       json.RawMessage `json:"value"`
}

type response struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Object interface{}     `json:"object"`
	Paths  []string        `json:"paths,omitempty"`
	Error  string          `json:"error,omitempty"`
	Panic  string          `json:"panic,omitempty"`

	// schema op
	StructuralErrors []string `json:"structural_errors,omitempty"`
	DefaultsPruned   bool     `json:"defaults_pruned,omitempty"`

	// quantity ops
	Quantity *quantityResult `json:"quantity,omitempty"`
	Other    *quantityResult `json:"other,omitempty"`
	Cmp      *int            `json:"cmp,omitempty"`
	Equal    *bool           `json:"equal,omitempty"`
}

type quantityResult struct {
	OK        bool   `json:"ok"`
	Error     string `json:"error,omitempty"`
	String    string `json:"string,omitempty"`
	Canonical string `json:"canonical,omitempty"`
	Format    string `json:"format,omitempty"`
	JSON      string `json:"json,omitempty"`
}

var schemas = map[string]*structuralschema.Structural{}

// A request that runs longer than this makes the oracle exit (status 3) naming it:
// some inputs make upstream compute for hours (e.g. ParseQuantity("1e-1000000000")),
// and a stuck oracle must not burn the machine's cores after its client has gone.
var requestTimeout = 20 * time.Second

var (
	current     atomic.Pointer[[]byte]
	currentFrom atomic.Int64
)

func watchdog() {
	for range time.Tick(100 * time.Millisecond) {
		line := current.Load()
		if line != nil && time.Since(time.Unix(0, currentFrom.Load())) > requestTimeout {
			fmt.Fprintf(os.Stderr, "timeout: a request ran longer than %s: %s\n", requestTimeout, *line)
			os.Exit(3)
		}
	}
}

func main() {
	if v := os.Getenv("ORACLE_TIMEOUT"); v != "" {
		if d, err := time.ParseDuration(v); err == nil {
			requestTimeout = d
		}
	}
	go watchdog()
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriterSize(os.Stdout, 1<<16)
	defer out.Flush()
	for {
		line, err := in.ReadBytes('\n')
		if len(strings.TrimSpace(string(line))) > 0 {
			currentFrom.Store(time.Now().UnixNano())
			current.Store(&line)
			resp := handle(line)
			current.Store(nil)
			b, merr := json.Marshal(resp)
			if merr != nil {
				b, _ = json.Marshal(response{ID: resp.ID, Panic: "cannot encode the result: " + merr.Error()})
			}
			out.Write(b)
			out.WriteByte('\n')
		}
		// flush before blocking on a read, so that a client can pipeline batches
		if in.Buffered() == 0 {
			out.Flush()
		}
		if err == io.EOF {
			return
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "reading stdin:", err)
			os.Exit(1)
		}
	}
}

// handle answers one line; a panic in upstream code is reported, not fatal, so that one
// bad case cannot hide the answers to the others.
func handle(line []byte) (resp response) {
	var req request
	if err := json.Unmarshal(line, &req); err != nil {
		return response{Panic: "bad request line: " + err.Error()}
	}
	resp.ID = req.ID
	defer func() {
		if r := recover(); r != nil {
			resp = response{ID: req.ID, Panic: fmt.Sprintf("%v\n%s", r, debug.Stack())}
		}
	}()
	switch req.Op {
	case "schema":
		return addSchema(req)
	case "quantity":
		return quantityOp(req)
	case "quantity_json":
		q := &resource.Quantity{}
		r := describeQuantity(*q, q.UnmarshalJSON(req.Value))
		resp.Quantity = &r
		return resp
	}

	s, ok := schemas[req.Key]
	if !ok {
		resp.Panic = fmt.Sprintf("unknown schema key %q (send an op=schema line first)", req.Key)
		return resp
	}
	// a fresh copy per request: every op mutates its object in place
	var obj interface{}
	if err := utiljson.Unmarshal(req.Object, &obj); err != nil {
		resp.Panic = "cannot decode the object: " + err.Error()
		return resp
	}
	root := req.Root == nil || *req.Root

	switch req.Op {
	case "prune":
		paths := structuralpruning.PruneWithOptions(obj, s, root,
			structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
		resp.Object, resp.Paths = obj, nonNil(paths)
	case "prune_nulls":
		structuraldefaulting.PruneNonNullableNullsWithoutDefaults(obj, s)
		resp.Object = obj
	case "default":
		structuraldefaulting.Default(obj, s)
		resp.Object = obj
	case "coerce":
		fieldErr, paths := schemaobjectmeta.CoerceWithOptions(nil, obj, s, root,
			schemaobjectmeta.CoerceOptions{DropInvalidFields: req.DropInvalid})
		if fieldErr != nil {
			resp.Error = fieldErr.Error()
		} else {
			resp.Object, resp.Paths = obj, nonNil(paths)
		}
	case "decode":
		m, ok := obj.(map[string]interface{})
		if !ok {
			resp.Error = fmt.Sprintf("a request body must be an object, got %T", obj)
			return resp
		}
		paths, err := decode(m, s)
		if err != nil {
			resp.Error = err.Error()
		} else {
			resp.Object, resp.Paths = m, nonNil(paths)
		}
	default:
		resp.Panic = fmt.Sprintf("unknown op %q", req.Op)
	}
	return resp
}

// addSchema prepares a CRD version's schema as crdHandler.getOrCreateServingInfoFor does.
func addSchema(req request) (resp response) {
	resp.ID = req.ID
	v1 := &apiextensionsv1.JSONSchemaProps{}
	// typed objects are decoded case-sensitively by the API server's JSON serializer
	if strict, err := kjson.UnmarshalStrict(req.Schema, v1); err != nil {
		resp.Error = "cannot decode the schema: " + err.Error()
		return resp
	} else if len(strict) > 0 {
		for _, e := range strict {
			resp.StructuralErrors = append(resp.StructuralErrors, "decoding: "+e.Error())
		}
	}
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v1, internal, nil); err != nil {
		resp.Error = "cannot convert the schema to internal: " + err.Error()
		return resp
	}
	s, err := structuralschema.NewStructural(internal)
	if err != nil {
		resp.Error = "not structural: " + err.Error()
		return resp
	}
	for _, e := range structuralschema.ValidateStructural(nil, s) {
		resp.StructuralErrors = append(resp.StructuralErrors, e.Error())
	}
	s = s.DeepCopy()
	before := s.DeepCopy()
	if err := structuraldefaulting.PruneDefaults(s); err != nil {
		resp.Error = "PruneDefaults: " + err.Error()
		return resp
	}
	resp.DefaultsPruned = !reflect.DeepEqual(before, s)
	schemas[req.Key] = s
	return resp
}

// decode is unstructuredSchemaCoercer.apply for a body of the CRD's own group and kind
// (dropInvalidMetadata=false as for requests; unknown field paths tracked as with the
// default fieldValidation=Warn), followed by unstructuredDefaulter.Default.
func decode(obj map[string]interface{}, s *structuralschema.Structural) ([]string, error) {
	u := &unstructured.Unstructured{Object: obj}
	var unknownFieldPaths []string
	kind, foundKind, err := unstructured.NestedString(u.UnstructuredContent(), "kind")
	if err != nil {
		return nil, err
	}
	apiVersion, foundAPIVersion, err := unstructured.NestedString(u.UnstructuredContent(), "apiVersion")
	if err != nil {
		return nil, err
	}
	objectMeta, foundObjectMeta, metaUnknownFields, err := schemaobjectmeta.GetObjectMetaWithOptions(u.Object, schemaobjectmeta.ObjectMetaOptions{
		DropMalformedFields:     false,
		ReturnUnknownFieldPaths: true,
	})
	if err != nil {
		return nil, err
	}
	unknownFieldPaths = append(unknownFieldPaths, metaUnknownFields...)
	if _, err := schema.ParseGroupVersion(apiVersion); err != nil {
		return nil, err
	}
	unknownFieldPaths = append(unknownFieldPaths, structuralpruning.PruneWithOptions(u.Object, s, true,
		structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})...)
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(u.Object, s)
	fieldErr, paths := schemaobjectmeta.CoerceWithOptions(nil, u.Object, s, false, schemaobjectmeta.CoerceOptions{
		DropInvalidFields:       false,
		ReturnUnknownFieldPaths: true,
	})
	if fieldErr != nil {
		return nil, fieldErr
	}
	unknownFieldPaths = append(unknownFieldPaths, paths...)
	if foundKind {
		u.SetKind(kind)
	}
	if foundAPIVersion {
		u.SetAPIVersion(apiVersion)
	}
	if foundObjectMeta {
		if err := schemaobjectmeta.SetObjectMeta(u.Object, objectMeta); err != nil {
			return nil, err
		}
	}
	structuraldefaulting.Default(u.UnstructuredContent(), s)
	return unknownFieldPaths, nil
}

func quantityOp(req request) (resp response) {
	resp.ID = req.ID
	if req.A == nil {
		resp.Panic = "quantity needs a"
		return resp
	}
	a, errA := resource.ParseQuantity(*req.A)
	ra := describeQuantity(a, errA)
	resp.Quantity = &ra
	if req.B != nil {
		b, errB := resource.ParseQuantity(*req.B)
		rb := describeQuantity(b, errB)
		resp.Other = &rb
		if errA == nil && errB == nil {
			c := a.Cmp(b)
			e := a.Equal(b)
			resp.Cmp, resp.Equal = &c, &e
		}
	}
	return resp
}

func describeQuantity(q resource.Quantity, err error) quantityResult {
	if err != nil {
		return quantityResult{Error: err.Error()}
	}
	number, suffix := q.CanonicalizeBytes(nil)
	b, jerr := q.MarshalJSON()
	r := quantityResult{
		OK:        true,
		String:    q.String(),
		Canonical: string(number) + string(suffix),
		Format:    string(q.Format),
		JSON:      string(b),
	}
	if jerr != nil {
		r.JSON = "error: " + jerr.Error()
	}
	return r
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
