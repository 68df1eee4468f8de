package v1

import (
	"fmt"
	"os"
	"time"

	v2 "example.com/tiny/api/v2"
	"sigs.k8s.io/controller-runtime/pkg/conversion"
)

// ConvertTo misbehaves on purpose for some names: the tests of compatfuzz's Go
// converter see each way a conversion can go wrong.
func (src *Thing) ConvertTo(dstRaw conversion.Hub) error {
	dst := dstRaw.(*v2.Thing)
	dst.ObjectMeta = src.ObjectMeta
	dst.Spec.Name = src.Spec.Name
	switch src.Spec.Name {
	case "panic":
		panic(fmt.Sprintf("cannot convert %d items", len(src.Spec.Items)))
	case "index":
		_ = src.Spec.Items[0]
	case "error":
		return fmt.Errorf("the name %q is refused", src.Spec.Name)
	case "exit":
		os.Exit(7)
	case "loop":
		time.Sleep(time.Hour)
	case "print":
		fmt.Println("noise on stdout")
	case "drop":
		return nil
	}
	dst.Spec.Items = src.Spec.Items
	return nil
}

func (dst *Thing) ConvertFrom(srcRaw conversion.Hub) error {
	src := srcRaw.(*v2.Thing)
	dst.ObjectMeta = src.ObjectMeta
	dst.Spec.Name = src.Spec.Name
	dst.Spec.Items = src.Spec.Items
	return nil
}
