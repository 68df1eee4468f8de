package v1alpha1

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	v1 "example.com/shipyard/api/v1"
)

var _ conversion.Convertible = &Vessel{}

// ConvertTo converts this Vessel (v1alpha1) to the Hub version (v1).
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
	if !bug("annotation-not-cleaned") {
		dst.Annotations = v1.RemoveConversionData(dst.Annotations)
	}

	s, d := &src.Spec, &dst.Spec
	d.Master = s.Captain
	city, country, _ := strings.Cut(s.HomePort, "/")
	d.HomePort = v1.Port{City: city, Country: country}
	d.Speed = nil
	if s.SpeedKnots != nil {
		d.Speed = &v1.Speed{DeciKnots: *s.SpeedKnots * 10}
		if stash.Speed != nil && stash.Speed.DeciKnots/10 == *s.SpeedKnots {
			d.Speed = stash.Speed
		}
	}
	d.CargoCapacity = copyQuantity(s.CargoCapacity)
	if bug("quantity-format") && s.CargoCapacity != nil {
		// "whole tonnes are enough": Value() rounds 1500m up to 2.
		d.CargoCapacity = resource.NewQuantity(s.CargoCapacity.Value(), s.CargoCapacity.Format)
	}
	d.AllowedCargo = nil
	if s.AllowedCargo != nil {
		d.AllowedCargo = make([]v1.CargoKind, len(s.AllowedCargo))
		for i, k := range s.AllowedCargo {
			d.AllowedCargo[i] = v1.CargoKind(k)
		}
	}
	d.Crew = nil
	if s.Crew != nil {
		d.Crew = make([]v1.CrewMember, len(s.Crew))
		for i, c := range s.Crew {
			d.Crew[i] = v1.CrewMember(c)
		}
	}
	d.Tags = copyTags(s.Tags)
	d.Insurance = nil
	if s.Insurance != nil || bug("nil-pointer-zero-struct") {
		d.Insurance = &v1.Insurance{}
		if s.Insurance != nil {
			*d.Insurance = v1.Insurance(*s.Insurance)
		}
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
	if !bug("rename-lost-on-way-back") {
		d.Captain = s.Master
	}
	d.HomePort = s.HomePort.City + "/" + s.HomePort.Country
	if bug("split-not-joined") {
		d.HomePort = s.HomePort.City
	}
	d.SpeedKnots = nil
	if s.Speed != nil {
		knots := s.Speed.DeciKnots / 10
		if bug("wrong-unit") {
			knots = (s.Speed.DeciKnots + 5) / 10 // rounded, remainder never stashed
		} else if s.Speed.DeciKnots%10 != 0 {
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
	if s.Crew != nil {
		d.Crew = make([]CrewMember, len(s.Crew))
		for i, c := range s.Crew {
			d.Crew[i] = CrewMember(c)
		}
	}
	d.Tags = copyTags(s.Tags)
	d.Insurance = nil
	if s.Insurance != nil {
		d.Insurance = &Insurance{Underwriter: s.Insurance.Underwriter, PolicyNumber: s.Insurance.PolicyNumber}
	}

	dst.Status = VesselStatus(*src.Status.DeepCopy())

	var err error
	dst.Annotations, err = v1.StashConversionData(dst.Annotations, stash)
	return err
}

func copyQuantity(q *resource.Quantity) *resource.Quantity {
	if q == nil {
		return nil
	}
	c := q.DeepCopy()
	return &c
}

func copyTags(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}
