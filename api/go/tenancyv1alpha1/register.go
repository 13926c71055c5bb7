// Package tenancyv1alpha1 is the Go API of hostclaim-apiserver: HostClaim
// and HardwareData as served under tenancy.metal3.io/v1alpha1, built on
// baremetal-operator v0.13.2's Go types (apis/metal3.io/v1alpha1) so that a
// consumer such as CAPM3 keeps the field names, helpers and constants it
// already uses.
//
// Two differences from registering upstream's types directly:
//   - HostClaimSpec carries `nodeReuse`, which upstream's spec lacks. A full
//     update (PUT, controller-runtime client.Update) built from upstream's
//     type omits it, and the server removes what a full update omits: the
//     claim would leave its node-reuse pool (docs/tenants.md).
//   - HostClaim, HardwareData and their lists are types of this package,
//     not aliases: a scheme can hold them next to upstream's metal3.io
//     types (as CAPM3's does) without one Go type mapping to two kinds,
//     for which controller-runtime refuses to guess a kind
//     (apiutil.GVKForObject) unless the object carries apiVersion and kind.
//
// Registration follows k8s.io/apimachinery/pkg/runtime.SchemeBuilder, as
// generated API packages do.
package tenancyv1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the group and version hostclaim-apiserver serves.
var GroupVersion = schema.GroupVersion{Group: "tenancy.metal3.io", Version: "v1alpha1"}

var (
	// SchemeBuilder registers this package's types under GroupVersion.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds HostClaim, HardwareData, their lists and the
	// meta/v1 options types (ListOptions, DeleteOptions, ...) to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion, &HostClaim{}, &HostClaimList{}, &HardwareData{}, &HardwareDataList{})
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
