// Package v2 holds a Deployment-sized kind for compatfuzz's Go converter benchmark.
package v2

import (
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	GroupVersion  = schema.GroupVersion{Group: "bench.example.com", Version: "v2"}
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}
	AddToScheme   = SchemeBuilder.AddToScheme
)

// Deploy carries a whole Deployment spec: what a workload operator's kind holds.
type Deploy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              appsv1.DeploymentSpec `json:"spec"`
}

type DeployList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Deploy `json:"items"`
}

func (in *Deploy) DeepCopyObject() runtime.Object {
	out := &Deploy{TypeMeta: in.TypeMeta}
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	in.Spec.DeepCopyInto(&out.Spec)
	return out
}

func (in *DeployList) DeepCopyObject() runtime.Object {
	out := &DeployList{TypeMeta: in.TypeMeta}
	for i := range in.Items {
		out.Items = append(out.Items, *in.Items[i].DeepCopyObject().(*Deploy))
	}
	return out
}

func init() { SchemeBuilder.Register(&Deploy{}, &DeployList{}) }
