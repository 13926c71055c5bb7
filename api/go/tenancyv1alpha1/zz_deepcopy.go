package tenancyv1alpha1

// Deep copies, written as controller-gen would generate them (this package
// has four types; upstream's embedded types bring their own DeepCopyInto).

import "k8s.io/apimachinery/pkg/runtime"

// DeepCopyInto copies the spec into out.
func (in *HostClaimSpec) DeepCopyInto(out *HostClaimSpec) {
	*out = *in
	in.HostClaimSpec.DeepCopyInto(&out.HostClaimSpec)
}

// DeepCopyInto copies the claim into out.
func (in *HostClaim) DeepCopyInto(out *HostClaim) {
	*out = *in
	out.TypeMeta = in.TypeMeta
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	in.Spec.DeepCopyInto(&out.Spec)
	in.Status.DeepCopyInto(&out.Status)
}

// DeepCopy returns a copy of the claim.
func (in *HostClaim) DeepCopy() *HostClaim {
	if in == nil {
		return nil
	}
	out := new(HostClaim)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *HostClaim) DeepCopyObject() runtime.Object {
	if c := in.DeepCopy(); c != nil {
		return c
	}
	return nil
}

// DeepCopyInto copies the list into out.
func (in *HostClaimList) DeepCopyInto(out *HostClaimList) {
	*out = *in
	out.TypeMeta = in.TypeMeta
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]HostClaim, len(in.Items))
		for i := range in.Items {
			in.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
}

// DeepCopy returns a copy of the list.
func (in *HostClaimList) DeepCopy() *HostClaimList {
	if in == nil {
		return nil
	}
	out := new(HostClaimList)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *HostClaimList) DeepCopyObject() runtime.Object {
	if c := in.DeepCopy(); c != nil {
		return c
	}
	return nil
}

// DeepCopyInto copies the HardwareData into out.
func (in *HardwareData) DeepCopyInto(out *HardwareData) {
	*out = *in
	out.TypeMeta = in.TypeMeta
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	in.Spec.DeepCopyInto(&out.Spec)
}

// DeepCopy returns a copy of the HardwareData.
func (in *HardwareData) DeepCopy() *HardwareData {
	if in == nil {
		return nil
	}
	out := new(HardwareData)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *HardwareData) DeepCopyObject() runtime.Object {
	if c := in.DeepCopy(); c != nil {
		return c
	}
	return nil
}

// DeepCopyInto copies the list into out.
func (in *HardwareDataList) DeepCopyInto(out *HardwareDataList) {
	*out = *in
	out.TypeMeta = in.TypeMeta
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]HardwareData, len(in.Items))
		for i := range in.Items {
			in.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
}

// DeepCopy returns a copy of the list.
func (in *HardwareDataList) DeepCopy() *HardwareDataList {
	if in == nil {
		return nil
	}
	out := new(HardwareDataList)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *HardwareDataList) DeepCopyObject() runtime.Object {
	if c := in.DeepCopy(); c != nil {
		return c
	}
	return nil
}
