// Package v1 is the hub of a tiny API for compatfuzz's own tests.
package v2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	GroupVersion  = schema.GroupVersion{Group: "tiny.example.com", Version: "v2"}
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}
	AddToScheme   = SchemeBuilder.AddToScheme
)

type Spec struct {
	Name  string   `json:"name,omitempty"`
	Items []string `json:"items,omitempty"`
}

type Thing struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              Spec `json:"spec,omitempty"`
}

type ThingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Thing `json:"items"`
}

func (in *Thing) DeepCopyObject() runtime.Object {
	out := *in
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec.Items = append([]string(nil), in.Spec.Items...)
	return &out
}

func (in *ThingList) DeepCopyObject() runtime.Object {
	out := *in
	out.Items = append([]Thing(nil), in.Items...)
	return &out
}

func init() { SchemeBuilder.Register(&Thing{}, &ThingList{}) }
