// Command hostclaim-capm3flow runs, as a tenant, what Cluster API Provider
// Metal3 (CAPM3) does in HostClaim mode (metal3-docs
// design/hostclaim-multitenancy-and-hybrid-clusters.md; CAPM3's
// multi-tenancy contract: the provider acts through an identityRef
// kubeconfig scoped to one namespace). It uses a controller-runtime client
// and the repository's Go API package (api/go/tenancyv1alpha1), with only
// the kubeconfig it is given: a ServiceAccount token bound to the tenant
// namespace.
//
// It runs in one of two phases, so that the caller can change the
// inventory in between (and so prove the reuse was not a coincidence):
//
//	--phase=provision  list the claimable hosts and their boot MACs; create
//	                   the Machine's user-data, meta-data and network-data
//	                   Secrets and its HostClaim; wait for Ready; read the
//	                   Machine's addresses and boot MAC from HardwareData;
//	                   remediate (reboot annotation); scale down (delete,
//	                   wait until the host is released)
//	--phase=reuse      scale up again with the same nodeReuse and check the
//	                   claim gets --expect-hardware-data back
//
// It prints one JSON summary line on stdout and exits 1 if any check failed
// (2 on bad usage).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	tenancyv1alpha1 "hostclaim-apiserver/api/go/tenancyv1alpha1"
)

type options struct {
	kubeconfig         string
	namespace          string
	foreignNamespace   string
	phase              string
	machine            string
	pool               string
	failureDomain      string
	inNamespace        string
	matchLabels        map[string]string
	expectHardwareData string
	timeout            time.Duration
}

func main() {
	var o options
	var labels string
	fs := flag.NewFlagSet(os.Args[0], flag.ContinueOnError)
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "the identityRef kubeconfig: a token bound to one tenant namespace (required)")
	fs.StringVar(&o.namespace, "namespace", "", "the tenant namespace (required)")
	fs.StringVar(&o.foreignNamespace, "foreign-namespace", "", "provision: another tenant's namespace, which the identity must not reach (required)")
	fs.StringVar(&o.phase, "phase", "", "provision or reuse (required)")
	fs.StringVar(&o.machine, "machine", "", "the Metal3Machine's name; names the claim and its Secrets (required)")
	fs.StringVar(&o.pool, "node-reuse", "", "the claim's nodeReuse pool (required)")
	fs.StringVar(&o.failureDomain, "failure-domain", "", "the Machine's failure domain")
	fs.StringVar(&o.inNamespace, "in-namespace", "", "hostSelector.inNamespace")
	fs.StringVar(&labels, "match-labels", "{}", "hostSelector.matchLabels as a JSON object")
	fs.StringVar(&o.expectHardwareData, "expect-hardware-data", "", "reuse: the HardwareData the claim must get back (required)")
	fs.DurationVar(&o.timeout, "timeout", 4*time.Minute, "overall deadline")
	klog.InitFlags(fs)
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if err := json.Unmarshal([]byte(labels), &o.matchLabels); err != nil {
		fmt.Fprintf(os.Stderr, "--match-labels: %v\n", err)
		os.Exit(2)
	}
	if o.kubeconfig == "" || o.namespace == "" || o.machine == "" || o.pool == "" ||
		(o.phase != "provision" && o.phase != "reuse") || (o.phase == "reuse" && o.expectHardwareData == "") || (o.phase == "provision" && o.foreignNamespace == "") {
		fmt.Fprintln(os.Stderr, "--kubeconfig, --namespace, --machine, --node-reuse and --phase=provision|reuse are required; provision also needs --foreign-namespace, reuse --expect-hardware-data")
		os.Exit(2)
	}
	ctrllog.SetLogger(klog.NewKlogr())

	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	s := run(ctx, o)
	cancel()
	klog.Flush()

	line, err := json.Marshal(s)
	if err != nil {
		fmt.Fprintf(os.Stderr, "cannot encode summary: %v\n", err)
		os.Exit(1)
	}
	fmt.Println(string(line))
	if !s.OK {
		fmt.Fprintf(os.Stderr, "hostclaim-capm3flow: %d check(s) failed:\n", len(s.Failures))
		for _, f := range s.Failures {
			fmt.Fprintf(os.Stderr, "  - %s\n", f)
		}
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) *summary {
	s := newSummary(o)
	c, err := newClient(o.kubeconfig)
	f := &flow{o: o, s: s, c: c}
	if f.expect("setup", err) {
		switch o.phase {
		case "provision":
			f.provision(ctx)
		case "reuse":
			f.reuse(ctx)
		}
	}
	s.OK = len(s.Failures) == 0
	return s
}

// newClient is CAPM3's remote client for an identityRef: the kubeconfig
// only; a scheme with the tenancy types next to baremetal-operator's
// metal3.io types (CAPM3's scheme holds both), core/v1 (the data Secrets)
// and authentication/v1 (SelfSubjectReview, to report who the client is).
func newClient(path string) (client.Client, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", path, err)
	}
	cfg.UserAgent = "hostclaim-capm3flow"
	scheme := runtime.NewScheme()
	if err := tenancyv1alpha1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := bmov1alpha1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := addKubeTypes(scheme); err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: scheme})
}

func addKubeTypes(scheme *runtime.Scheme) error {
	if err := corev1.AddToScheme(scheme); err != nil {
		return err
	}
	return authenticationv1.AddToScheme(scheme)
}
