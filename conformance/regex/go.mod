module compatfuzz.invalid/conformance/regex

go 1.26.0

godebug default=go1.26
