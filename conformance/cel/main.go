// Command celoracle evaluates CEL expressions in the Kubernetes CEL environment the API
// server builds for x-kubernetes-validations rules (k8s.io/apiserver/pkg/cel/environment's
// base environment, every library of the StoredExpressions set: quantity, lists, regex,
// URLs, IP, CIDR, format, semver, sets, cel-go's strings extension, ...).
//
// One JSON object per stdin line: {"expr": "...", "self": <JSON value>}; one JSON object per
// stdout line: {"value": <encoded value>} or {"error": "...", "stage": "compile"|"eval"}.
// JSON integers are bound as int64 and other numbers as float64 (as the API server decodes
// request bodies); values are encoded with their CEL type so that 1 and 1.0 differ.
package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/cel/environment"
)

type request struct {
	Expr string          `json:"expr"`
	Self json.RawMessage `json:"self"`
}

type response struct {
	Value any    `json:"value,omitempty"`
	Error string `json:"error,omitempty"`
	Stage string `json:"stage,omitempty"`
}

func main() {
	envSet, err := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()).Extend(
		environment.VersionedOptions{
			IntroducedVersion: version.MajorMinor(1, 0),
			EnvOptions:        []cel.EnvOption{cel.Variable("self", cel.DynType)},
		})
	if err != nil {
		fatal(err)
	}
	env, err := envSet.Env(environment.StoredExpressions)
	if err != nil {
		fatal(err)
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<26)
	out := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	for in.Scan() {
		var req request
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			fatal(fmt.Errorf("bad request %q: %w", in.Text(), err))
		}
		if err := enc.Encode(evaluate(env, req)); err != nil {
			fatal(err)
		}
		if err := out.Flush(); err != nil {
			fatal(err)
		}
	}
	if err := in.Err(); err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "celoracle:", err)
	os.Exit(2)
}

type compiled struct {
	prg cel.Program
	err string
}

// programs caches each expression's program: the suite sends one template many times.
var programs = map[string]compiled{}

func evaluate(env *cel.Env, req request) response {
	c, ok := programs[req.Expr]
	if !ok {
		ast, iss := env.Compile(req.Expr)
		if iss.Err() != nil {
			c.err = iss.Err().Error()
		} else if prg, err := env.Program(ast); err != nil {
			c.err = err.Error()
		} else {
			c.prg = prg
		}
		programs[req.Expr] = c
	}
	if c.err != "" {
		return response{Error: c.err, Stage: "compile"}
	}
	prg := c.prg
	self, err := decode(req.Self)
	if err != nil {
		return response{Error: err.Error(), Stage: "input"}
	}
	val, _, err := prg.Eval(map[string]any{"self": self})
	if err != nil {
		return response{Error: err.Error(), Stage: "eval"}
	}
	return response{Value: encode(val)}
}

// decode reads a JSON value with integers as int64 and other numbers as float64.
func decode(raw json.RawMessage) (any, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return numbers(v)
}

func numbers(v any) (any, error) {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i, nil
		}
		return x.Float64()
	case []any:
		for i := range x {
			y, err := numbers(x[i])
			if err != nil {
				return nil, err
			}
			x[i] = y
		}
	case map[string]any:
		for k := range x {
			y, err := numbers(x[k])
			if err != nil {
				return nil, err
			}
			x[k] = y
		}
	}
	return v, nil
}

// encode writes a CEL value as {"<type>": payload}; doubles as their IEEE bits.
func encode(v ref.Val) any {
	switch x := v.(type) {
	case types.Bool:
		return map[string]any{"bool": bool(x)}
	case types.Int:
		return map[string]any{"int": fmt.Sprint(int64(x))}
	case types.Uint:
		return map[string]any{"uint": fmt.Sprint(uint64(x))}
	case types.Double:
		return map[string]any{"double": fmt.Sprintf("%016x", math.Float64bits(float64(x)))}
	case types.String:
		return map[string]any{"string": string(x)}
	case types.Bytes:
		return map[string]any{"bytes": base64.StdEncoding.EncodeToString([]byte(x))}
	case types.Null:
		return map[string]any{"null": true}
	}
	if l, ok := v.(traits.Lister); ok && v.Type() == types.ListType {
		n := int(l.Size().(types.Int))
		items := make([]any, n)
		for i := 0; i < n; i++ {
			items[i] = encode(l.Get(types.Int(i)))
		}
		return map[string]any{"list": items}
	}
	if m, ok := v.(traits.Mapper); ok && v.Type() == types.MapType {
		var entries [][2]any
		it := m.Iterator()
		for it.HasNext() == types.True {
			k := it.Next()
			entries = append(entries, [2]any{encode(k), encode(m.Get(k))})
		}
		sort.Slice(entries, func(i, j int) bool {
			a, _ := json.Marshal(entries[i][0])
			b, _ := json.Marshal(entries[j][0])
			return string(a) < string(b)
		})
		return map[string]any{"map": entries}
	}
	out := map[string]any{"type": v.Type().TypeName()}
	if s, ok := v.ConvertToType(types.StringType).(types.String); ok {
		out["string"] = string(s)
	}
	return out
}
