package main

// With --all-namespaces the informer lists and watches HostClaims of every
// namespace, as a tenant may through the opt-in cluster-wide read grant
// (deploy/components/cluster-wide-reads): the server must answer with the
// claims of the namespaces the tenant may read and nothing else, in the
// initial state and in every later event.

import (
	"context"
	"fmt"
	"slices"
	"strings"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// createUnreadable creates a claim in --other-namespace with the status
// (admin) client while the informer runs, and checks the tenant's GET of it
// is refused exactly as the GET of a name that does not exist there: the
// answer must not tell whether it exists (kube-apiserver's RBAC refuses
// both with 403 before the request reaches the server). Then it creates one
// in its own namespace: converging on that one means the informer has had
// every event before it, the unreadable claim's included, had the server
// sent it.
func (sc *scenario) createUnreadable(ctx context.Context) error {
	claim := newClaim(sc.o.otherNamespace, fmt.Sprintf("gc-%s-other", sc.o.runID), sc.o.runID)
	if err := sc.status.Create(ctx, claim); err != nil {
		return fmt.Errorf("admin create in %s: %w", sc.o.otherNamespace, err)
	}
	existing := sc.tenant.Get(ctx, client.ObjectKeyFromObject(claim), &bmov1alpha1.HostClaim{})
	absentKey := client.ObjectKey{Namespace: sc.o.otherNamespace, Name: fmt.Sprintf("gc-%s-absent", sc.o.runID)}
	absent := sc.tenant.Get(ctx, absentKey, &bmov1alpha1.HostClaim{})
	if !apierrors.IsForbidden(existing) && !apierrors.IsNotFound(existing) {
		return fmt.Errorf("tenant GET of %s/%s: want Forbidden or NotFound, got %s (%v)", claim.Namespace, claim.Name, describeStatus(existing), existing)
	}
	sameAnswer := strings.ReplaceAll(existing.Error(), claim.Name, absentKey.Name) == absent.Error()
	if describeStatus(existing) != describeStatus(absent) || !sameAnswer {
		return fmt.Errorf("an existing claim and an absent one answer differently: %s (%v) vs %s (%v)", describeStatus(existing), existing, describeStatus(absent), absent)
	}
	after := newClaim(sc.o.namespace, fmt.Sprintf("gc-%s-after", sc.o.runID), sc.o.runID)
	if err := sc.tenant.Create(ctx, after); err != nil {
		return fmt.Errorf("create %s: %w", after.Name, err)
	}
	return nil
}

// onlyReadable checks the cluster-wide informer against --readable-namespaces
// and records which namespaces it holds.
func (sc *scenario) onlyReadable(ctx context.Context) error {
	all := &bmov1alpha1.HostClaimList{}
	if err := sc.cache.List(ctx, all); err != nil {
		return fmt.Errorf("list from the informer cache: %w", err)
	}
	readable := strings.Split(sc.o.readableNamespaces, ",")
	var unreadable []string
	for _, item := range all.Items {
		if !slices.Contains(sc.s.CachedNamespaces, item.Namespace) {
			sc.s.CachedNamespaces = append(sc.s.CachedNamespaces, item.Namespace)
		}
		if !slices.Contains(readable, item.Namespace) {
			unreadable = append(unreadable, item.Namespace+"/"+item.Name)
		}
	}
	slices.Sort(sc.s.CachedNamespaces)
	if len(unreadable) > 0 {
		return fmt.Errorf("the informer holds claims the tenant may not read: %v", unreadable)
	}
	return nil
}
