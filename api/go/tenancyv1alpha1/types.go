package tenancyv1alpha1

import (
	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// HostClaimSpec is upstream's spec (image, user/meta/network data,
// hostSelector, consumerRef, failureDomain, poweredOn, customDeploy) plus
// this API's nodeReuse. The embedded struct is inlined, so upstream's fields
// keep their JSON names and Go selectors (spec.Image, spec.HostSelector...).
type HostClaimSpec struct {
	bmov1alpha1.HostClaimSpec `json:",inline"`

	// NodeReuse names the claim's node-reuse pool: when the claim is
	// deleted its host is kept for the pool, and the pool's next claim
	// gets it back (docs/binding.md). Read when the claim is bound and when
	// it is deleted.
	NodeReuse string `json:"nodeReuse,omitempty"`
}

// HostClaim asks for one bare-metal host; its status is written by the
// server (upstream's HostClaimStatus: conditions, hardwareData,
// bareMetalHost, poweredOn).
type HostClaim struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   HostClaimSpec               `json:"spec,omitempty"`
	Status bmov1alpha1.HostClaimStatus `json:"status,omitempty"`
}

// HostClaimList is a list of HostClaims.
type HostClaimList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []HostClaim `json:"items"`
}

// HardwareData is what a tenant may know about one host it holds or may
// claim: upstream's HardwareDataSpec (spec.hardware: NICs with MACs and IPs,
// hostname, CPU, RAM, storage) and the annotation BootMACAddressAnnotation.
type HardwareData struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec bmov1alpha1.HardwareDataSpec `json:"spec,omitempty"`
}

// HardwareDataList is a list of HardwareData.
type HardwareDataList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []HardwareData `json:"items"`
}

// BootMACAddress returns the host's boot MAC address (the BareMetalHost's
// spec.bootMACAddress), which HardwareData carries as an annotation because
// upstream's HardwareData has no field for it; "" if it is not set.
func (h *HardwareData) BootMACAddress() string {
	return h.Annotations[BootMACAddressAnnotation]
}
