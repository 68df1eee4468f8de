package v1

import (
	"encoding/json"
	"fmt"
)

// Hub marks v1 as the conversion hub: v1alpha1 and v1beta1 convert to and from it.
func (*Vessel) Hub() {}

// ConversionDataAnnotation is set on a spoke (v1alpha1, v1beta1) object to
// carry the v1 fields the spoke cannot represent, so that v1 -> spoke -> v1
// is lossless (the Cluster API pattern). The key is reserved: users must not
// set it themselves.
const ConversionDataAnnotation = "fleet.example.com/conversion-data"

// ConversionData is the JSON stored in ConversionDataAnnotation.
// +kubebuilder:object:generate=false
type ConversionData struct {
	// Speed is set when speed.deciKnots is not a whole number of knots.
	Speed *Speed `json:"speed,omitempty"`
	// Maintenance has no spoke field at all.
	Maintenance *MaintenanceWindow `json:"maintenance,omitempty"`
}

// Empty reports whether nothing needs to be stashed.
func (d *ConversionData) Empty() bool { return d.Speed == nil && d.Maintenance == nil }

// StashConversionData stores d in the annotations (nothing when d is empty).
func StashConversionData(annotations map[string]string, d *ConversionData) (map[string]string, error) {
	if d.Empty() {
		return annotations, nil
	}
	b, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[ConversionDataAnnotation] = string(b)
	return annotations, nil
}

// ConversionDataFrom reads the stash from the annotations (empty when there is none).
func ConversionDataFrom(annotations map[string]string) (*ConversionData, error) {
	d := &ConversionData{}
	if raw, ok := annotations[ConversionDataAnnotation]; ok {
		if err := json.Unmarshal([]byte(raw), d); err != nil {
			return nil, fmt.Errorf("annotation %s: %w", ConversionDataAnnotation, err)
		}
	}
	return d, nil
}

// RemoveConversionData deletes the stash from the annotations; an emptied
// map becomes nil so that the hub's JSON is unchanged.
func RemoveConversionData(annotations map[string]string) map[string]string {
	delete(annotations, ConversionDataAnnotation)
	if len(annotations) == 0 {
		return nil
	}
	return annotations
}
