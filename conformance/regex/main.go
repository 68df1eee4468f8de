// Command regex answers, for each JSON line {"pattern": P, "inputs": [S...]}, with one
// JSON line {"compile_error": E|null, "matches": [B...]}: Go's regexp.Compile(P) (the
// RE2 syntax the Kubernetes API server applies to a CRD's pattern and to CEL's
// matches/find/findAll) and MatchString(S) for each input. Inputs travel as JSON
// strings; an input given as {"codepoints": [lo, hi]} stands for every rune from lo to
// hi, and the answer is then the list of runes in it that match, as [lo, hi] ranges
// (used to compare character classes in bulk).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"unicode"
	"unicode/utf8"
)

type request struct {
	Pattern    string   `json:"pattern"`
	Inputs     []string `json:"inputs"`
	Codepoints []rune   `json:"codepoints"`
}

type answer struct {
	CompileError *string  `json:"compile_error"`
	Matches      []bool   `json:"matches"`
	Ranges       [][2]rune `json:"ranges,omitempty"`
	Unicode      string   `json:"unicode"`
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<28)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	for in.Scan() {
		var req request
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			fmt.Fprintln(os.Stderr, "bad request:", err)
			os.Exit(2)
		}
		ans := answer{Matches: []bool{}, Unicode: unicode.Version}
		re, err := regexp.Compile(req.Pattern)
		if err != nil {
			text := err.Error()
			ans.CompileError = &text
		} else {
			for _, s := range req.Inputs {
				ans.Matches = append(ans.Matches, re.MatchString(s))
			}
			if len(req.Codepoints) == 2 {
				start := rune(-1)
				buf := make([]byte, 4)
				for r := req.Codepoints[0]; r <= req.Codepoints[1]+1; r++ {
					ok := false
					if r <= req.Codepoints[1] && utf8.ValidRune(r) {
						n := utf8.EncodeRune(buf, r)
						ok = re.Match(buf[:n])
					}
					if ok && start < 0 {
						start = r
					} else if !ok && start >= 0 {
						ans.Ranges = append(ans.Ranges, [2]rune{start, r - 1})
						start = -1
					}
				}
			}
		}
		if err := enc.Encode(ans); err != nil {
			fmt.Fprintln(os.Stderr, "write:", err)
			os.Exit(2)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "read:", err)
		os.Exit(2)
	}
}
