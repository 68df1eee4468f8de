"""The real API server backend: a kube-apiserver and etcd started as envtest starts them."""
