package v1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Port is a home port. v1alpha1 spells it as one "City/CC" string.
type Port struct {
	// +kubebuilder:validation:Pattern=`^[^/]+$`
	City string `json:"city"`
	// Country is an ISO 3166-1 alpha-2 code.
	// +kubebuilder:validation:Pattern=`^[A-Z]{2}$`
	Country string `json:"country"`
}

// Speed is a cruise speed in tenths of a knot. v1alpha1 and v1beta1 use whole knots.
type Speed struct {
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=600
	DeciKnots int32 `json:"deciKnots"`
}

// CrewMember is one member of the crew.
type CrewMember struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	Name string `json:"name"`
	// +kubebuilder:validation:Enum=Officer;Engineer;Deckhand;Cook
	// +optional
	Role string `json:"role,omitempty"`
}

// Insurance describes the hull insurance.
type Insurance struct {
	Underwriter string `json:"underwriter"`
	// PolicyNumber is never empty: leave it out when there is none.
	// +kubebuilder:validation:MinLength=1
	// +optional
	PolicyNumber string `json:"policyNumber,omitempty"`
}

// MaintenanceWindow is a weekly dry-dock slot. It exists only in v1.
type MaintenanceWindow struct {
	// +kubebuilder:validation:Enum=Mon;Tue;Wed;Thu;Fri;Sat;Sun
	Day string `json:"day"`
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=23
	StartHour int32 `json:"startHour"`
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=72
	// +optional
	DurationHours int32 `json:"durationHours,omitempty"`
}

// CargoKind is a kind of cargo.
// +kubebuilder:validation:Enum=Containers;Bulk;Liquid;Vehicles
type CargoKind string

// VesselSpec defines the desired state of Vessel.
// allowedCargo: [] (no cargo at all) and a cargoCapacity contradict each other;
// an absent allowedCargo (any cargo) does not.
// +kubebuilder:validation:XValidation:rule="!has(self.allowedCargo) || size(self.allowedCargo) > 0 || !has(self.cargoCapacity)",message="a vessel that allows no cargo (allowedCargo: []) has no cargoCapacity"
type VesselSpec struct {
	// Master commands the vessel (v1alpha1: captain).
	Master string `json:"master"`
	// HomePort (v1alpha1: "City/CC").
	HomePort Port `json:"homePort"`
	// Speed is the cruise speed (v1alpha1, v1beta1: speedKnots, whole knots).
	// Optional as in the spokes: nil (unset) is not deciKnots 0 (lying still).
	// +optional
	Speed *Speed `json:"speed,omitempty"`
	// +optional
	CargoCapacity *resource.Quantity `json:"cargoCapacity,omitempty"`
	// AllowedCargo: absent (nil) means any cargo, [] means none, hence
	// omitzero rather than omitempty.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=4
	AllowedCargo []CargoKind `json:"allowedCargo,omitzero"`
	// Crew: leave it out when there is no crew ([] is not allowed).
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=4
	Crew []CrewMember `json:"crew,omitempty"`
	// Tags: leave it out when there are no tags ({} is not allowed).
	// +optional
	// +kubebuilder:validation:MinProperties=1
	// +kubebuilder:validation:MaxProperties=4
	Tags map[string]string `json:"tags,omitempty"`
	// +optional
	Insurance *Insurance `json:"insurance,omitempty"`
	// Maintenance exists only in v1; older versions keep it in the
	// fleet.example.com/conversion-data annotation.
	// +optional
	Maintenance *MaintenanceWindow `json:"maintenance,omitempty"`
}

// VesselStatus defines the observed state of Vessel.
type VesselStatus struct {
	// +kubebuilder:validation:Enum=Docked;Underway;Anchored
	// +optional
	Phase string `json:"phase,omitempty"`
	// ObservedGeneration is the metadata.generation last acted on;
	// generations start at 1, so it is absent until then.
	// +kubebuilder:validation:Minimum=1
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// CrewAboard: 0 (nobody aboard) is an observation of its own, distinct
	// from unknown (absent), hence a pointer.
	// +kubebuilder:validation:Minimum=0
	// +optional
	CrewAboard *int32 `json:"crewAboard,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="Master",type=string,JSONPath=`.spec.master`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`

// Vessel is the Schema for the vessels API.
type Vessel struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is a standard object metadata
	// +optional
	metav1.ObjectMeta `json:"metadata,omitzero"`

	// spec defines the desired state of Vessel
	// +required
	Spec VesselSpec `json:"spec"`

	// status defines the observed state of Vessel
	// +optional
	Status VesselStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// VesselList contains a list of Vessel.
type VesselList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitzero"`
	Items           []Vessel `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Vessel{}, &VesselList{})
}
