package tenancyv1alpha1

const (
	// BootMACAddressAnnotation on a HardwareData holds the host's boot MAC
	// address, what CAPM3's network-data templates address as fromBootMAC.
	BootMACAddressAnnotation = "tenancy.metal3.io/boot-mac-address"

	// RebootAnnotation on a HostClaim reboots its host once; the server
	// removes it when the host has rebooted.
	RebootAnnotation = "reboot.metal3.io"
	// RebootAnnotationPrefix followed by "/<key>" on a HostClaim keeps the
	// host powered off until the annotation is removed (CAPM3's remediation
	// sets reboot.metal3.io/capm3-remediation-<machine>).
	RebootAnnotationPrefix = RebootAnnotation + "/"
)

// Condition types of a HostClaim's status beyond upstream's
// AssociatedCondition and SynchronizedCondition (docs/status.md).
const (
	AuthorizedCondition  = "Authorized"
	ProvisionedCondition = "Provisioned"
	// ReadyCondition is True when the workload is deployed and the host is
	// in the requested power state.
	ReadyCondition = "Ready"
)

// Reasons of the Associated condition while a claim waits for a host.
const (
	NoAdmittingPolicyReason       = "NoAdmittingPolicy"
	NoBareMetalHostReason         = "NoBareMetalHost"
	WaitingForNodeReuseHostReason = "WaitingForNodeReuseHost"
)
