// Package v1 wires the Vessel conversion webhook into a manager.
package v1

import (
	ctrl "sigs.k8s.io/controller-runtime"

	fleetv1 "example.com/shipyard/api/v1"
)

// SetupVesselWebhookWithManager registers the conversion webhook for Vessel
// (served at /convert; v1 is the hub, v1alpha1 and v1beta1 are spokes).
func SetupVesselWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &fleetv1.Vessel{}).Complete()
}
