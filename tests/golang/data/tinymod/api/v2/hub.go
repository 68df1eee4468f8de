package v2

// Hub marks v2 as the version conversions go through.
func (*Thing) Hub() {}
