"""What a round trip checks and who judges it: the API and its converters, the
properties, and the backends that play the API server (the model, a real kube-apiserver)."""
