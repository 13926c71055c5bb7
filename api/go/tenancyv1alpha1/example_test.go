package tenancyv1alpha1_test

import (
	"context"
	"fmt"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tenancyv1alpha1 "hostclaim-apiserver/api/go/tenancyv1alpha1"
)

// A tenant's controller-runtime client claims a host of a node-reuse pool
// and reads its boot MAC address once the claim names its HardwareData.
func Example() {
	scheme := runtime.NewScheme()
	if err := tenancyv1alpha1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", "tenant.kubeconfig")
	if err != nil {
		panic(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()

	claim := &tenancyv1alpha1.HostClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "worker-0"},
		Spec: tenancyv1alpha1.HostClaimSpec{
			HostClaimSpec: bmov1alpha1.HostClaimSpec{
				PoweredOn:    true,
				Image:        &bmov1alpha1.Image{URL: "http://images.example/ubuntu.qcow2", Checksum: "http://images.example/ubuntu.qcow2.sha256"},
				UserData:     &corev1.SecretReference{Name: "worker-0-userdata"},
				HostSelector: bmov1alpha1.HostSelector{MatchLabels: map[string]string{"role": "worker"}},
			},
			NodeReuse: "workers",
		},
	}
	if err := c.Create(ctx, claim); err != nil {
		panic(err)
	}
	// ... once the Ready condition is True:
	if err := c.Get(ctx, client.ObjectKeyFromObject(claim), claim); err != nil {
		panic(err)
	}
	if ref := claim.Status.HardwareData; ref != nil {
		hw := &tenancyv1alpha1.HardwareData{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: claim.Namespace, Name: ref.Name}, hw); err != nil {
			panic(err)
		}
		fmt.Println(hw.BootMACAddress(), hw.Spec.HardwareDetails.Hostname)
	}
}
