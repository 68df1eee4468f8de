package v2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Gadget has no Hub: it converts through conversion functions registered on the
// scheme (conversion-gen's RegisterConversions pattern), by scheme.Convert.
type Gadget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Inches            int64 `json:"inches,omitempty"`
}

type GadgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Gadget `json:"items"`
}

func (in *Gadget) DeepCopyObject() runtime.Object {
	out := *in
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return &out
}

func (in *GadgetList) DeepCopyObject() runtime.Object {
	out := *in
	out.Items = append([]Gadget(nil), in.Items...)
	return &out
}

func init() { SchemeBuilder.Register(&Gadget{}, &GadgetList{}) }
