package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tenancyv1alpha1 "hostclaim-apiserver/api/go/tenancyv1alpha1"
)

const pollInterval = 250 * time.Millisecond

type flow struct {
	o options
	s *summary
	c client.Client
}

// provision: one Machine from claim to scale-down.
func (f *flow) provision(ctx context.Context) {
	f.expect("who am I (SelfSubjectReview)", f.whoAmI(ctx))
	f.expect("the identity reaches no other namespace (403 on its HostClaims and HardwareData)", f.confined(ctx))
	f.expect("list claimable HardwareData with boot MACs", f.listClaimable(ctx))
	claim, ok := f.createMachine(ctx)
	if !ok {
		return
	}
	if !f.expect("claim becomes Ready", f.waitReady(ctx, claim)) {
		return
	}
	if !f.expect("read the Machine's addresses and boot MAC from HardwareData", f.readHost(ctx, claim)) {
		return
	}
	if !f.expect("remediation reboot (reboot.metal3.io/<key>) powers the host off and on", f.remediate(ctx, claim)) {
		return
	}
	f.expect("scale down: delete the claim, wait until its host is released", f.scaleDown(ctx, claim))
}

// reuse: the pool's next Machine gets the released host back.
func (f *flow) reuse(ctx context.Context) {
	f.expect("who am I (SelfSubjectReview)", f.whoAmI(ctx))
	claim, ok := f.createMachine(ctx)
	if !ok {
		return
	}
	if !f.expect("claim becomes Ready", f.waitReady(ctx, claim)) {
		return
	}
	if !f.expect("read the Machine's addresses and boot MAC from HardwareData", f.readHost(ctx, claim)) {
		return
	}
	f.expect("the same host came back through nodeReuse", func() error {
		if got := f.s.Host.HardwareData; got != f.o.expectHardwareData {
			return fmt.Errorf("claim got HardwareData %q, want %q (the pool's released host)", got, f.o.expectHardwareData)
		}
		return nil
	}())
}

func (f *flow) whoAmI(ctx context.Context) error {
	review := &authenticationv1.SelfSubjectReview{}
	if err := f.c.Create(ctx, review); err != nil {
		return err
	}
	f.s.Identity = review.Status.UserInfo.Username
	return nil
}

// confined: the identityRef is bound to its namespace only; listing
// another tenant's claims or HardwareData is refused (kube-apiserver's RBAC
// answers before the request reaches the server).
func (f *flow) confined(ctx context.Context) error {
	for _, list := range []client.ObjectList{&tenancyv1alpha1.HostClaimList{}, &tenancyv1alpha1.HardwareDataList{}} {
		err := f.c.List(ctx, list, client.InNamespace(f.o.foreignNamespace))
		if !apierrors.IsForbidden(err) {
			return fmt.Errorf("listing %T in %s: want 403 Forbidden, got %v", list, f.o.foreignNamespace, err)
		}
	}
	return nil
}

// listClaimable: the hosts the tenant may claim (and those it holds),
// each with the boot MAC a network-data template would address.
func (f *flow) listClaimable(ctx context.Context) error {
	list := &tenancyv1alpha1.HardwareDataList{}
	if err := f.c.List(ctx, list, client.InNamespace(f.o.namespace)); err != nil {
		return err
	}
	for i := range list.Items {
		f.s.Claimable[list.Items[i].Name] = list.Items[i].BootMACAddress()
	}
	return nil
}

// createMachine writes what CAPM3 writes for one Metal3Machine in HostClaim
// mode: the bootstrap user data, the rendered meta-data and network-data
// Secrets, and the HostClaim that references them.
func (f *flow) createMachine(ctx context.Context) (*tenancyv1alpha1.HostClaim, bool) {
	name := f.o.machine
	secrets := []*corev1.Secret{
		f.secret(name+"-userdata", "value", "#cloud-config\nhostname: "+name+"\n"),
		f.secret(name+"-metadata", "metaData", "local-hostname: "+name+"\n"),
		f.secret(name+"-networkdata", "networkData", `{"links":[],"networks":[],"services":[]}`),
	}
	ok := f.expect("create the user-data, meta-data and network-data Secrets", func() error {
		for _, secret := range secrets {
			if err := f.c.Create(ctx, secret); err != nil {
				return fmt.Errorf("secret %s: %w", secret.Name, err)
			}
		}
		return nil
	}())
	if !ok {
		return nil, false
	}
	claim := &tenancyv1alpha1.HostClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.o.namespace, Name: name, Labels: map[string]string{"cluster.x-k8s.io/cluster-name": "capm3-flow"}},
		Spec: tenancyv1alpha1.HostClaimSpec{
			HostClaimSpec: bmov1alpha1.HostClaimSpec{
				PoweredOn: true,
				Image: &bmov1alpha1.Image{
					URL: "http://images.example/ubuntu-24.04.qcow2", Checksum: "http://images.example/ubuntu-24.04.qcow2.sha256sum",
					ChecksumType: bmov1alpha1.SHA256, DiskFormat: ptrTo("qcow2"),
				},
				UserData:     &corev1.SecretReference{Name: secrets[0].Name},
				MetaData:     &corev1.SecretReference{Name: secrets[1].Name},
				NetworkData:  &corev1.SecretReference{Name: secrets[2].Name},
				HostSelector: bmov1alpha1.HostSelector{MatchLabels: f.o.matchLabels, InNamespace: f.o.inNamespace},
				ConsumerRef: &corev1.ObjectReference{
					APIVersion: "infrastructure.cluster.x-k8s.io/v1beta1", Kind: "Metal3Machine",
					Namespace: f.o.namespace, Name: name,
				},
				FailureDomain: f.o.failureDomain,
			},
			NodeReuse: f.o.pool,
		},
	}
	ok = f.expect("create the HostClaim (image, data, hostSelector, failureDomain, consumerRef, nodeReuse)", func() error {
		if err := f.c.Create(ctx, claim); err != nil {
			return err
		}
		if claim.Spec.NodeReuse != f.o.pool {
			return fmt.Errorf("created claim has nodeReuse %q, want %q", claim.Spec.NodeReuse, f.o.pool)
		}
		return nil
	}())
	return claim, ok
}

func (f *flow) secret(name, key, value string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.o.namespace, Name: name},
		Type:       corev1.SecretTypeOpaque,
		StringData: map[string]string{key: value},
	}
}

func (f *flow) waitReady(ctx context.Context, claim *tenancyv1alpha1.HostClaim) error {
	start := time.Now()
	err := f.poll(ctx, "Ready", func() (bool, string, error) {
		if err := f.c.Get(ctx, client.ObjectKeyFromObject(claim), claim); err != nil {
			return false, "", err
		}
		ready := meta.FindStatusCondition(claim.Status.Conditions, tenancyv1alpha1.ReadyCondition)
		return ready != nil && ready.Status == metav1.ConditionTrue && claim.Status.PoweredOn && claim.Status.HardwareData != nil,
			fmt.Sprintf("conditions %+v", claim.Status.Conditions), nil
	})
	f.s.Timings.CreateToReady = time.Since(start).Milliseconds()
	return err
}

// readHost reads the claim's HardwareData as CAPM3 fills a Machine's
// addresses (an InternalIP per NIC address, the hostname as Hostname and
// InternalDNS) and the boot MAC its network data would address.
func (f *flow) readHost(ctx context.Context, claim *tenancyv1alpha1.HostClaim) error {
	ref := claim.Status.HardwareData
	hw := &tenancyv1alpha1.HardwareData{}
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: f.o.namespace, Name: ref.Name}, hw); err != nil {
		return fmt.Errorf("get HardwareData %s: %w", ref.Name, err)
	}
	details := hw.Spec.HardwareDetails
	if details == nil {
		return fmt.Errorf("HardwareData %s has no spec.hardware", ref.Name)
	}
	h := &host{Claim: claim.Name, HardwareData: hw.Name, Hostname: details.Hostname, BootMACAddress: hw.BootMACAddress(), NICs: []nic{}, Addresses: []machineAddress{}}
	for _, n := range details.NIC {
		h.NICs = append(h.NICs, nic{Name: n.Name, MAC: n.MAC, IP: n.IP})
		if n.IP != "" {
			h.Addresses = append(h.Addresses, machineAddress{Type: "InternalIP", Address: n.IP})
		}
	}
	if details.Hostname != "" {
		h.Addresses = append(h.Addresses, machineAddress{Type: "Hostname", Address: details.Hostname}, machineAddress{Type: "InternalDNS", Address: details.Hostname})
	}
	f.s.Host = h
	if h.BootMACAddress == "" {
		return fmt.Errorf("HardwareData %s has no %s annotation", hw.Name, tenancyv1alpha1.BootMACAddressAnnotation)
	}
	if !slices.ContainsFunc(h.NICs, func(n nic) bool { return n.MAC == h.BootMACAddress }) {
		return fmt.Errorf("boot MAC %s is none of the host's NICs %+v", h.BootMACAddress, h.NICs)
	}
	return nil
}

// remediate reboots the host as CAPM3's remediation does: a keyed reboot
// annotation holds the host off; once it is off, the annotation is removed
// and the host comes back on. The annotation is written with full updates
// (PUT) of the package's type, which must keep spec.nodeReuse.
func (f *flow) remediate(ctx context.Context, claim *tenancyv1alpha1.HostClaim) error {
	key := tenancyv1alpha1.RebootAnnotationPrefix + "capm3-remediation-" + claim.Name
	if err := f.update(ctx, claim, func(c *tenancyv1alpha1.HostClaim) {
		metav1.SetMetaDataAnnotation(&c.ObjectMeta, key, `{"mode":"hard"}`)
	}); err != nil {
		return fmt.Errorf("set %s: %w", key, err)
	}
	f.s.NodeReuseAfterUpdate = claim.Spec.NodeReuse
	start := time.Now()
	if err := f.waitPower(ctx, claim, false); err != nil {
		return err
	}
	f.s.Timings.RebootPowerOff = time.Since(start).Milliseconds()
	if err := f.update(ctx, claim, func(c *tenancyv1alpha1.HostClaim) { delete(c.Annotations, key) }); err != nil {
		return fmt.Errorf("remove %s: %w", key, err)
	}
	start = time.Now()
	if err := f.waitPower(ctx, claim, true); err != nil {
		return err
	}
	f.s.Timings.RebootPowerOn = time.Since(start).Milliseconds()
	if claim.Spec.NodeReuse != f.o.pool {
		return fmt.Errorf("spec.nodeReuse is %q after full updates, want %q", claim.Spec.NodeReuse, f.o.pool)
	}
	return nil
}

// update is a read-modify-write with a full update, retried on conflicts
// (the server writes status concurrently).
func (f *flow) update(ctx context.Context, claim *tenancyv1alpha1.HostClaim, change func(*tenancyv1alpha1.HostClaim)) error {
	return f.poll(ctx, "update", func() (bool, string, error) {
		if err := f.c.Get(ctx, client.ObjectKeyFromObject(claim), claim); err != nil {
			return false, "", err
		}
		change(claim)
		err := f.c.Update(ctx, claim)
		if apierrors.IsConflict(err) {
			return false, err.Error(), nil
		}
		return err == nil, "", err
	})
}

func (f *flow) waitPower(ctx context.Context, claim *tenancyv1alpha1.HostClaim, on bool) error {
	return f.poll(ctx, fmt.Sprintf("status.poweredOn=%t", on), func() (bool, string, error) {
		if err := f.c.Get(ctx, client.ObjectKeyFromObject(claim), claim); err != nil {
			return false, "", err
		}
		ready := meta.FindStatusCondition(claim.Status.Conditions, tenancyv1alpha1.ReadyCondition)
		done := claim.Status.PoweredOn == on && (!on || (ready != nil && ready.Status == metav1.ConditionTrue))
		return done, fmt.Sprintf("poweredOn %t, conditions %+v", claim.Status.PoweredOn, claim.Status.Conditions), nil
	})
}

// scaleDown deletes the claim; the server removes it once the host is
// released, so NotFound means released.
func (f *flow) scaleDown(ctx context.Context, claim *tenancyv1alpha1.HostClaim) error {
	start := time.Now()
	if err := f.c.Delete(ctx, claim); err != nil {
		return err
	}
	err := f.poll(ctx, "released", func() (bool, string, error) {
		err := f.c.Get(ctx, client.ObjectKeyFromObject(claim), &tenancyv1alpha1.HostClaim{})
		if apierrors.IsNotFound(err) {
			return true, "", nil
		}
		return false, "claim still present", err
	})
	f.s.Timings.DeleteToRelease = time.Since(start).Milliseconds()
	return err
}

// poll calls step every pollInterval until it reports done, fails, or the
// overall deadline passes.
func (f *flow) poll(ctx context.Context, what string, step func() (done bool, last string, err error)) error {
	for {
		done, last, err := step()
		if err != nil || done {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w; last seen: %s", what, ctx.Err(), last)
		case <-time.After(pollInterval):
		}
	}
}

func ptrTo[T any](v T) *T { return &v }
