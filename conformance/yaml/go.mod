module compatfuzz.invalid/conformance/yaml

go 1.26.0

godebug default=go1.26

require sigs.k8s.io/yaml v1.6.0

require go.yaml.in/yaml/v2 v2.4.4 // indirect
