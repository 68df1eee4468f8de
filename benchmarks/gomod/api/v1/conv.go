package v1

import (
	v2 "example.com/bench/api/v2"
	"sigs.k8s.io/controller-runtime/pkg/conversion"
)

// ConvertTo copies the object into the hub, as most spokes do for most fields.
func (src *Deploy) ConvertTo(dstRaw conversion.Hub) error {
	dst := dstRaw.(*v2.Deploy)
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	src.Spec.DeepCopyInto(&dst.Spec)
	return nil
}

// ConvertFrom copies the hub back.
func (dst *Deploy) ConvertFrom(srcRaw conversion.Hub) error {
	src := srcRaw.(*v2.Deploy)
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	src.Spec.DeepCopyInto(&dst.Spec)
	return nil
}
