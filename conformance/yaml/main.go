// Command yamloracle converts YAML to JSON exactly as Kubernetes does, with
// sigs.k8s.io/yaml's YAMLToJSON and YAMLToJSONStrict (go.yaml.in/yaml/v2 underneath),
// the conversion kubectl and kube-apiserver run on every YAML manifest and request body.
//
// One JSON string per stdin line (a YAML document); one JSON object per stdout line:
// {"json": <the converted document>, "strict": <the same, or absent>} or
// {"error": "...", "strict_error": "..."}.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

type response struct {
	JSON        json.RawMessage `json:"json,omitempty"`
	Error       string          `json:"error,omitempty"`
	Strict      json.RawMessage `json:"strict,omitempty"`
	StrictError string          `json:"strict_error,omitempty"`
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<26)
	out := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	for in.Scan() {
		var text string
		if err := json.Unmarshal(in.Bytes(), &text); err != nil {
			fmt.Fprintln(os.Stderr, "yamloracle: each line must be a JSON string:", err)
			os.Exit(2)
		}
		var resp response
		if j, err := yaml.YAMLToJSON([]byte(text)); err != nil {
			resp.Error = err.Error()
		} else {
			resp.JSON = j
		}
		if j, err := yaml.YAMLToJSONStrict([]byte(text)); err != nil {
			resp.StrictError = err.Error()
		} else {
			resp.Strict = j
		}
		if err := enc.Encode(resp); err != nil {
			fmt.Fprintln(os.Stderr, "yamloracle:", err)
			os.Exit(2)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "yamloracle:", err)
		os.Exit(2)
	}
	if err := out.Flush(); err != nil {
		os.Exit(2)
	}
}
