package v1_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	v1 "example.com/shipyard/api/v1"
	"example.com/shipyard/api/v1alpha1"
	"example.com/shipyard/api/v1beta1"
)

func qty(s string) *resource.Quantity { q := resource.MustParse(s); return &q }

func i32(v int32) *int32 { return &v }

func meta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: "harbour", Generation: 3,
		Labels: map[string]string{"app": "shipyard"}}
}

// Hand-written valid objects of each version.
var (
	hubs = []*v1.Vessel{
		{ObjectMeta: meta("minimal"), Spec: v1.VesselSpec{Master: "Ahab",
			HomePort: v1.Port{City: "Nantucket", Country: "US"}}},
		{ObjectMeta: meta("full"), Spec: v1.VesselSpec{
			Master: "Nemo", HomePort: v1.Port{City: "Rotterdam", Country: "NL"},
			Speed: &v1.Speed{DeciKnots: 125}, CargoCapacity: qty("12500m"),
			AllowedCargo: []v1.CargoKind{"Bulk", "Liquid"},
			Crew:         []v1.CrewMember{{Name: "ned", Role: "Deckhand"}, {Name: "conseil"}},
			Tags:         map[string]string{"Owner": "Aronnax", "ice-class": "1A"},
			Insurance:    &v1.Insurance{Underwriter: "Lloyd's"},
			Maintenance:  &v1.MaintenanceWindow{Day: "Sun", StartHour: 6, DurationHours: 12},
		}, Status: v1.VesselStatus{Phase: "Underway", ObservedGeneration: 3, CrewAboard: i32(2)}},
		// Zero values that are valid: an empty allowedCargo (no cargo at all),
		// speed 0 (lying still), nobody aboard, startHour 0.
		{ObjectMeta: metav1.ObjectMeta{Name: "zero-values", Annotations: map[string]string{"note": "x"}},
			Spec: v1.VesselSpec{Master: "", HomePort: v1.Port{City: "Den Helder", Country: "NL"},
				Speed: &v1.Speed{DeciKnots: 0}, AllowedCargo: []v1.CargoKind{},
				Maintenance: &v1.MaintenanceWindow{Day: "Mon"}},
			Status: v1.VesselStatus{CrewAboard: i32(0)}},
		{ObjectMeta: meta("slow"), Spec: v1.VesselSpec{Master: "Crusoe",
			HomePort: v1.Port{City: "Hull", Country: "GB"}, Speed: &v1.Speed{DeciKnots: 7}}},
	}
	alphas = []*v1alpha1.Vessel{
		{ObjectMeta: meta("minimal"), Spec: v1alpha1.VesselSpec{Captain: "Ahab", HomePort: "Nantucket/US"}},
		{ObjectMeta: meta("full"), Spec: v1alpha1.VesselSpec{
			Captain: "Haddock", HomePort: "Antwerp/BE", SpeedKnots: i32(14), CargoCapacity: qty("12.5"),
			AllowedCargo: []v1alpha1.CargoKind{},
			Crew:         []v1alpha1.CrewMember{{Name: "tintin", Role: "Officer"}},
			Tags:         map[string]string{"Owner": "Moulinsart"},
		}, Status: v1alpha1.VesselStatus{Phase: "Docked", ObservedGeneration: 2}},
		{ObjectMeta: meta("zero-values"), Spec: v1alpha1.VesselSpec{Captain: "Nobody", HomePort: "Oslo/NO",
			SpeedKnots: i32(0)}, Status: v1alpha1.VesselStatus{CrewAboard: i32(0)}},
	}
	betas = []*v1beta1.Vessel{
		{ObjectMeta: meta("minimal"), Spec: v1beta1.VesselSpec{Master: "Ahab",
			HomePort: v1beta1.Port{City: "Nantucket", Country: "US"}}},
		{ObjectMeta: meta("full"), Spec: v1beta1.VesselSpec{
			Master: "Hornblower", HomePort: v1beta1.Port{City: "Portsmouth", Country: "GB"},
			SpeedKnots: i32(9), CargoCapacity: qty("40Ki"), AllowedCargo: []v1beta1.CargoKind{"Containers"},
			Crew:      []v1beta1.CrewMember{{Name: "bush", Role: "Officer"}},
			Tags:      map[string]string{"Owner": "Admiralty"},
			Insurance: &v1beta1.Insurance{Underwriter: "Lloyd's", PolicyNumber: "HMS-1"},
		}, Status: v1beta1.VesselStatus{Phase: "Anchored", ObservedGeneration: 5, CrewAboard: i32(1)}},
	}
)

// canonical is the object's JSON with TypeMeta cleared (the webhook sets it).
func canonical(t *testing.T, obj runtime.Object) map[string]any {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "apiVersion")
	delete(m, "kind")
	return m
}

// safely turns a panicking conversion into an error.
func safely(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return f()
}

type spoke interface {
	runtime.Object
	conversion.Convertible
}

var spokes = map[string]func() spoke{
	"v1alpha1": func() spoke { return &v1alpha1.Vessel{} },
	"v1beta1":  func() spoke { return &v1beta1.Vessel{} },
}

// trip is one round trip: its name and the failure, if any ("" when equal).
type trip struct{ name, failure string }

func roundTrips(t *testing.T) []trip {
	var out []trip
	check := func(name string, in runtime.Object, run func() (runtime.Object, error)) {
		before := canonical(t, in)
		got, err := run()
		failure := ""
		if err != nil {
			failure = err.Error()
		} else if d := cmp.Diff(before, canonical(t, got)); d != "" {
			failure = "(-before +after)\n" + d
		}
		if in.(metav1.Object).GetName() != "" {
			name += " " + in.(metav1.Object).GetName()
		}
		out = append(out, trip{name, failure})
	}
	for _, h := range hubs {
		for _, ver := range []string{"v1alpha1", "v1beta1"} {
			check("v1->"+ver+"->v1", h, func() (runtime.Object, error) {
				s, back := spokes[ver](), &v1.Vessel{}
				return back, safely(func() error {
					if err := s.ConvertFrom(h.DeepCopy()); err != nil {
						return err
					}
					return s.ConvertTo(back)
				})
			})
		}
	}
	var inputs []spoke
	for _, a := range alphas {
		inputs = append(inputs, a)
	}
	for _, b := range betas {
		inputs = append(inputs, b)
	}
	for _, in := range inputs {
		from := "v1beta1"
		if _, ok := in.(*v1alpha1.Vessel); ok {
			from = "v1alpha1"
		}
		for _, via := range []string{"", "v1alpha1", "v1beta1"} {
			name := from + "->v1->" + from
			if via != "" {
				name = from + "->v1->" + via + "->v1->" + from
			}
			check(name, in, func() (runtime.Object, error) {
				out := spokes[from]()
				return out, safely(func() error {
					hub := &v1.Vessel{}
					if err := in.DeepCopyObject().(spoke).ConvertTo(hub); err != nil {
						return err
					}
					if via != "" {
						mid, hub2 := spokes[via](), &v1.Vessel{}
						if err := mid.ConvertFrom(hub); err != nil {
							return err
						}
						if err := mid.ConvertTo(hub2); err != nil {
							return err
						}
						hub = hub2
					}
					return out.ConvertFrom(hub)
				})
			})
		}
	}
	return out
}

// TestRoundTrips: every round trip is lossless. It honours SHIPYARD_BUG from
// the environment, so `SHIPYARD_BUG=wrong-unit go test ./...` fails.
func TestRoundTrips(t *testing.T) {
	for _, tr := range roundTrips(t) {
		if tr.failure != "" {
			t.Errorf("%s: %s", tr.name, tr.failure)
		}
	}
}

// TestSeededBugs switches each seeded bug on and checks that the round trip
// named in the table breaks.
func TestSeededBugs(t *testing.T) {
	for _, tc := range []struct{ bug, trip string }{
		{"nil-pointer-zero-struct", "v1alpha1->v1->v1alpha1 minimal"},
		{"empty-slice-vs-nil", "v1beta1->v1->v1beta1 minimal"},
		{"convertfrom-drops-field", "v1->v1beta1->v1 full"},
		{"annotation-not-cleaned", "v1->v1alpha1->v1 full"},
		{"wrong-unit", "v1->v1alpha1->v1 full"},
		{"map-keys-lost", "v1beta1->v1->v1beta1 full"},
		{"split-not-joined", "v1->v1alpha1->v1 minimal"},
		{"rename-lost-on-way-back", "v1alpha1->v1->v1alpha1 minimal"},
		{"panic-on-empty-list", "v1->v1beta1->v1 minimal"},
		{"quantity-format", "v1alpha1->v1->v1alpha1 full"},
		{"hub-field-not-restored", "v1->v1beta1->v1 full"},
	} {
		t.Run(tc.bug, func(t *testing.T) {
			t.Setenv("SHIPYARD_BUG", tc.bug)
			var failing []string
			found := false
			for _, tr := range roundTrips(t) {
				if tr.failure == "" {
					continue
				}
				failing = append(failing, tr.name)
				if tr.name == tc.trip {
					found = true
					t.Logf("%s: %s", tr.name, tr.failure)
				}
			}
			if !found {
				t.Errorf("round trip %q did not break; failing: %s", tc.trip, strings.Join(failing, ", "))
			}
		})
	}
}
