// Command hostclaim-goclient drives tenancy.metal3.io/v1alpha1 HostClaims
// the way a Go operator would: upstream baremetal-operator types, a
// controller-runtime client and a controller-runtime cache (client-go
// informer) against kube-apiserver, which proxies to hostclaim-apiserver.
//
// It prints one JSON summary line on stdout and exits 1 if any check failed
// (2 on bad usage). Which protocol the informer's reflector used - a WatchList
// stream (sendInitialEvents=true) or a classic LIST then WATCH - is read from
// the requests it actually sent, recorded by a transport wrapper.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// groupVersion is where hostclaim-apiserver serves HostClaim; upstream BMO
// registers the same Go types under metal3.io/v1alpha1.
var groupVersion = schema.GroupVersion{Group: "tenancy.metal3.io", Version: "v1alpha1"}

type options struct {
	kubeconfig       string
	statusKubeconfig string
	namespace        string
	runID            string
	// allNamespaces makes the informer cluster-wide; otherNamespace and
	// readableNamespaces then say what it must and must not hold (allnamespaces.go).
	allNamespaces      bool
	otherNamespace     string
	readableNamespaces string
	timeout            time.Duration
	syncTimeout        time.Duration
	convergeTimeout    time.Duration
}

func main() {
	var o options
	fs := flag.NewFlagSet(os.Args[0], flag.ContinueOnError)
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig of the tenant (required)")
	fs.StringVar(&o.statusKubeconfig, "status-kubeconfig", "", "kubeconfig allowed to update hostclaims/status (required)")
	fs.StringVar(&o.namespace, "namespace", "", "namespace to work in (required)")
	fs.StringVar(&o.runID, "run-id", "", "short DNS label naming this run's objects (required)")
	fs.BoolVar(&o.allNamespaces, "all-namespaces", false, "informer on all namespaces (the cluster-wide read grant), not on --namespace")
	fs.StringVar(&o.otherNamespace, "other-namespace", "", "with --all-namespaces: a namespace the tenant cannot read, where the status kubeconfig creates a claim mid-run")
	fs.StringVar(&o.readableNamespaces, "readable-namespaces", "", "with --all-namespaces: comma-separated namespaces whose claims the tenant may read")
	fs.DurationVar(&o.timeout, "timeout", 3*time.Minute, "overall deadline")
	fs.DurationVar(&o.syncTimeout, "sync-timeout", 30*time.Second, "how long the informer may take to sync")
	fs.DurationVar(&o.convergeTimeout, "converge-timeout", 30*time.Second, "how long the informer cache may take to match a fresh LIST")
	klog.InitFlags(fs)
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if o.kubeconfig == "" || o.statusKubeconfig == "" || o.namespace == "" || o.runID == "" {
		fmt.Fprintln(os.Stderr, "--kubeconfig, --status-kubeconfig, --namespace and --run-id are required")
		os.Exit(2)
	}
	if o.allNamespaces && (o.otherNamespace == "" || o.readableNamespaces == "") {
		fmt.Fprintln(os.Stderr, "--all-namespaces needs --other-namespace and --readable-namespaces")
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
		fmt.Fprintf(os.Stderr, "hostclaim-goclient: %d check(s) failed:\n", len(s.Failures))
		for _, f := range s.Failures {
			fmt.Fprintf(os.Stderr, "  - %s\n", f)
		}
		os.Exit(1)
	}
}

// newScheme registers the upstream Go types under our group/version only
// (not under metal3.io), plus the meta/v1 types every group version needs
// (ListOptions, DeleteOptions, Status, WatchEvent...).
func newScheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	scheme.AddKnownTypes(groupVersion, &bmov1alpha1.HostClaim{}, &bmov1alpha1.HostClaimList{})
	metav1.AddToGroupVersion(scheme, groupVersion)
	return scheme
}

// restConfig loads a kubeconfig and records the hostclaims requests made with it.
func restConfig(path, userAgent string, rec *recorder) (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", path, err)
	}
	cfg.UserAgent = userAgent
	// No client-side throttling delays in a short scripted run.
	cfg.QPS, cfg.Burst = 50, 100
	cfg.Wrap(rec.wrap)
	return cfg, nil
}

func watchListClientEnabled() bool {
	return clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient)
}

func jsonString(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%+v", v)
	}
	return string(b)
}
