package v1

import (
	"strconv"
	"strings"

	v2 "example.com/tiny/api/v2"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
)

// v1's size "12in" is v2's inches 12; a size without "in" is refused.
func init() {
	SchemeBuilder.SchemeBuilder.Register(func(s *runtime.Scheme) error {
		if err := s.AddConversionFunc((*Gadget)(nil), (*v2.Gadget)(nil),
			func(a, b interface{}, _ conversion.Scope) error {
				in, out := a.(*Gadget), b.(*v2.Gadget)
				out.ObjectMeta = in.ObjectMeta
				if in.Size == "" {
					return nil
				}
				n, err := strconv.ParseInt(strings.TrimSuffix(in.Size, "in"), 10, 64)
				if err != nil {
					return err
				}
				out.Inches = n
				return nil
			}); err != nil {
			return err
		}
		return s.AddConversionFunc((*v2.Gadget)(nil), (*Gadget)(nil),
			func(a, b interface{}, _ conversion.Scope) error {
				in, out := a.(*v2.Gadget), b.(*Gadget)
				out.ObjectMeta = in.ObjectMeta
				if in.Inches != 0 {
					out.Size = strconv.FormatInt(in.Inches, 10) + "in"
				}
				return nil
			})
	})
}
