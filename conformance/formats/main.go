// Command formats is compatfuzz's oracle for Kubernetes format verdicts.
//
// It reads JSON lines {"format": F, "value": V[, "type": T]} on stdin and writes one line
// {"valid": bool, "known": bool} per input: whether a CRD field of type T (default
// "string") with format F admits V. It applies the API server's own code: the CRD format
// rules of apiextensions-apiserver pkg/apiserver/validation/formats.go (names are
// normalised by removing "-"; unlisted string formats are stripped, so anything is
// valid; integers keep only int32/int64, numbers only float/double), then
// k8s.io/kube-openapi's validate.NewSchemaValidator with strfmt.Default (validate.go):
// for a string its format, for a number its type check and its format's range check.
// Numbers are decoded as Kubernetes decodes them: int64 when they fit, float64
// otherwise. "known" is false when kube-openapi's strfmt registry does not know the
// format.
//
// "oracle -unicode" prints Go's \p{L} and \p{S} tables (hex ranges), which the hostname
// format uses, so the Python copy can be checked against the Go toolchain.
//
// go.mod pins k8s.io/kube-openapi and k8s.io/utils at the versions k8s.io/kubernetes
// v1.37.2 (and apiextensions-apiserver v0.37.2) require, and sets "godebug
// default=go1.26" as their go.mod does, so net/url is strict about colons in http(s)
// hosts (urlstrictcolons=1). Build (conformance/test_formats_conformance.py does, into
// ~/.cache/compatfuzz/):
//
//	GOFLAGS=-mod=readonly go build -o oracle .
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"unicode"

	"k8s.io/kube-openapi/pkg/validation/strfmt"
)

// crdStringFormats is apiextensions-apiserver's supportedVersionedFormats (1.0 and 1.34
// entries), already normalised.
var crdStringFormats = map[string]bool{}

func init() {
	for _, name := range []string{
		"bsonobjectid", "uri", "email", "hostname", "ipv4", "ipv6", "cidr", "mac", "uuid",
		"uuid3", "uuid4", "uuid5", "isbn", "isbn10", "isbn13", "creditcard", "ssn",
		"hexcolor", "rgbcolor", "byte", "password", "date", "duration", "datetime",
		"k8s-short-name", "k8s-long-name",
	} {
		crdStringFormats[strings.ReplaceAll(name, "-", "")] = true
	}
}

type request struct {
	Format string          `json:"format"`
	Type   string          `json:"type"`
	Value  json.RawMessage `json:"value"`
}

type response struct {
	Valid bool   `json:"valid"`
	Known bool   `json:"known"`
	Error string `json:"error,omitempty"`
}

// stripFormat is StripUnsupportedFormatsPostProcessorForVersion at the newest version.
func stripFormat(typ, format string) string {
	switch typ {
	case "", "string":
		if !crdStringFormats[strings.ReplaceAll(format, "-", "")] {
			return ""
		}
	case "integer":
		if format != "int32" && format != "int64" {
			return ""
		}
	case "number":
		if format != "float" && format != "double" {
			return ""
		}
	default:
		return ""
	}
	return format
}

// decodeValue decodes like Kubernetes' JSON decoder: integers as int64 when they fit,
// other numbers as float64.
func decodeValue(raw json.RawMessage) (interface{}, error) {
	var n json.Number
	if len(raw) > 0 && raw[0] != '"' && json.Unmarshal(raw, &n) == nil {
		if i, err := strconv.ParseInt(n.String(), 10, 64); err == nil {
			return i, nil
		}
		return n.Float64()
	}
	var v interface{}
	err := json.Unmarshal(raw, &v)
	return v, err
}

func verdict(req request) response {
	typ := req.Type
	if typ == "" {
		typ = "string"
	}
	value, err := decodeValue(req.Value)
	if err != nil {
		return response{Error: err.Error()}
	}
	format := stripFormat(typ, req.Format)
	known := format == "" || strfmt.Default.ContainsName(format) ||
		format == "int32" || format == "int64" || format == "float" || format == "double"
	valid, err := formatVerdict(typ, format, value)
	if err != nil {
		return response{Error: err.Error()}
	}
	return response{Valid: valid, Known: known}
}

func ranges(t *unicode.RangeTable) string {
	var out []string
	start := -1
	for r := rune(0); r <= unicode.MaxRune+1; r++ {
		in := r <= unicode.MaxRune && unicode.Is(t, r)
		if in && start < 0 {
			start = int(r)
		} else if !in && start >= 0 {
			if int(r)-1 == start {
				out = append(out, fmt.Sprintf("%x", start))
			} else {
				out = append(out, fmt.Sprintf("%x-%x", start, int(r)-1))
			}
			start = -1
		}
	}
	return strings.Join(out, " ")
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-unicode" {
		fmt.Printf("%s\n%s\n%s\n", unicode.Version, ranges(unicode.L), ranges(unicode.S))
		return
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<26)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	for in.Scan() {
		var req request
		resp := response{}
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			resp.Error = err.Error()
		} else {
			resp = verdict(req)
		}
		if err := enc.Encode(resp); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
