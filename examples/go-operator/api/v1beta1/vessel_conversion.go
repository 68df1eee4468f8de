package v1beta1

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	v1 "example.com/shipyard/api/v1"
)

var _ conversion.Convertible = &Vessel{}

// ConvertTo converts this Vessel (v1beta1) to the Hub version (v1).
func (src *Vessel) ConvertTo(dstRaw conversion.Hub) error {
	dst, ok := dstRaw.(*v1.Vessel)
	if !ok {
		return fmt.Errorf("unexpected hub type %T", dstRaw)
	}
	dst.ObjectMeta = *src.ObjectMeta.DeepCopy()
	stash, err := v1.ConversionDataFrom(dst.Annotations)
	if err != nil {
		return err
	}
	dst.Annotations = v1.RemoveConversionData(dst.Annotations)
	if bug("hub-field-not-restored") {
		stash = &v1.ConversionData{}
	}

	s, d := &src.Spec, &dst.Spec
	d.Master = s.Master
	d.HomePort = v1.Port(s.HomePort)
	d.Speed = nil
	if s.SpeedKnots != nil {
		d.Speed = &v1.Speed{DeciKnots: *s.SpeedKnots * 10}
		if stash.Speed != nil && stash.Speed.DeciKnots/10 == *s.SpeedKnots {
			d.Speed = stash.Speed
		}
	}
	d.CargoCapacity = copyQuantity(s.CargoCapacity)
	d.AllowedCargo = nil
	if s.AllowedCargo != nil || bug("empty-slice-vs-nil") {
		d.AllowedCargo = make([]v1.CargoKind, 0, len(s.AllowedCargo))
		for _, k := range s.AllowedCargo {
			d.AllowedCargo = append(d.AllowedCargo, v1.CargoKind(k))
		}
	}
	d.Crew = nil
	if s.Crew != nil {
		d.Crew = make([]v1.CrewMember, len(s.Crew))
		for i, c := range s.Crew {
			d.Crew[i] = v1.CrewMember(c)
		}
	}
	d.Tags = nil
	if s.Tags != nil {
		d.Tags = make(map[string]string, len(s.Tags))
		for k, v := range s.Tags {
			if bug("map-keys-lost") {
				k = strings.ToLower(k) // "normalise" tag keys
			}
			d.Tags[k] = v
		}
	}
	d.Insurance = nil
	if s.Insurance != nil {
		d.Insurance = &v1.Insurance{Underwriter: s.Insurance.Underwriter, PolicyNumber: s.Insurance.PolicyNumber}
	}
	d.Maintenance = stash.Maintenance

	dst.Status = v1.VesselStatus(*src.Status.DeepCopy())
	return nil
}

// ConvertFrom converts from the Hub version (v1) to this version.
func (dst *Vessel) ConvertFrom(srcRaw conversion.Hub) error {
	src, ok := srcRaw.(*v1.Vessel)
	if !ok {
		return fmt.Errorf("unexpected hub type %T", srcRaw)
	}
	dst.ObjectMeta = *src.ObjectMeta.DeepCopy()
	stash := &v1.ConversionData{Maintenance: src.Spec.Maintenance.DeepCopy()}

	s, d := &src.Spec, &dst.Spec
	d.Master = s.Master
	d.HomePort = Port(s.HomePort)
	d.SpeedKnots = nil
	if s.Speed != nil {
		knots := s.Speed.DeciKnots / 10
		if s.Speed.DeciKnots%10 != 0 {
			stash.Speed = s.Speed.DeepCopy()
		}
		d.SpeedKnots = &knots
	}
	d.CargoCapacity = copyQuantity(s.CargoCapacity)
	d.AllowedCargo = nil
	if s.AllowedCargo != nil {
		d.AllowedCargo = make([]CargoKind, len(s.AllowedCargo))
		for i, k := range s.AllowedCargo {
			d.AllowedCargo[i] = CargoKind(k)
		}
	}
	d.Crew = nil
	if bug("panic-on-empty-list") {
		// convert the head, then the tail: index out of range without crew.
		d.Crew = append([]CrewMember{CrewMember(s.Crew[0])}, convertCrew(s.Crew[1:])...)
	} else if s.Crew != nil {
		d.Crew = convertCrew(s.Crew)
	}
	d.Tags = nil
	if s.Tags != nil {
		d.Tags = make(map[string]string, len(s.Tags))
		for k, v := range s.Tags {
			d.Tags[k] = v
		}
	}
	d.Insurance = nil
	if s.Insurance != nil {
		d.Insurance = &Insurance{Underwriter: s.Insurance.Underwriter, PolicyNumber: s.Insurance.PolicyNumber}
	}

	dst.Status.Phase = src.Status.Phase
	dst.Status.CrewAboard = copyInt32(src.Status.CrewAboard)
	if !bug("convertfrom-drops-field") {
		dst.Status.ObservedGeneration = src.Status.ObservedGeneration
	}

	var err error
	dst.Annotations, err = v1.StashConversionData(dst.Annotations, stash)
	return err
}

func convertCrew(crew []v1.CrewMember) []CrewMember {
	out := make([]CrewMember, len(crew))
	for i, c := range crew {
		out[i] = CrewMember(c)
	}
	return out
}

func copyInt32(p *int32) *int32 {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func copyQuantity(q *resource.Quantity) *resource.Quantity {
	if q == nil {
		return nil
	}
	c := q.DeepCopy()
	return &c
}
