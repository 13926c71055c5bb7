package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/selection"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const runLabel = "goclient.test/run"

type check struct {
	Name    string `json:"name"`
	OK      bool   `json:"ok"`
	Message string `json:"message,omitempty"`
}

type objectVersion struct {
	Name            string `json:"name"`
	ResourceVersion string `json:"resourceVersion"`
}

type informerEvents struct {
	Added   int      `json:"added"`
	Updated int      `json:"updated"`
	Deleted []string `json:"deleted"`
}

type summary struct {
	OK                  bool   `json:"ok"`
	RunID               string `json:"runId"`
	Namespace           string `json:"namespace"`
	WatchListClientGate bool   `json:"watchListClientGate"`
	// Reflector is what the informer's own requests show about its protocol.
	Reflector reflectorReport `json:"reflector"`
	// SyncMillis is coarse: WaitForCacheSync polls every 100 ms.
	SyncMillis int64 `json:"syncMillis"`
	// InitialObjects is the informer's content right after it synced.
	InitialObjects  []string        `json:"initialObjects"`
	Created         []string        `json:"created"`
	Deleted         string          `json:"deleted,omitempty"`
	ConvergedMillis int64           `json:"convergedMillis"`
	FinalObjects    []objectVersion `json:"finalObjects"`
	InformerEvents  informerEvents  `json:"informerEvents"`
	// CachedNamespaces (with --all-namespaces): the namespaces of every claim the informer holds at the end.
	CachedNamespaces []string `json:"cachedNamespaces"`
	// ClientErrors lists the non-2xx answers the direct clients got (expected ones included).
	ClientErrors []requestRecord `json:"clientErrors"`
	Checks       []check         `json:"checks"`
	Failures     []string        `json:"failures"`
}

type scenario struct {
	o       options
	s       *summary
	tenant  client.Client
	status  client.Client
	cache   cache.Cache
	events  *eventLog
	records []*recorder
}

// expect records one named check; it returns whether it passed.
func (sc *scenario) expect(name string, err error) bool {
	c := check{Name: name, OK: err == nil}
	if err != nil {
		c.Message = err.Error()
		sc.s.Failures = append(sc.s.Failures, fmt.Sprintf("%s: %v", name, err))
		klog.ErrorS(err, "check failed", "check", name)
	} else {
		klog.V(1).InfoS("check passed", "check", name)
	}
	sc.s.Checks = append(sc.s.Checks, c)
	return err == nil
}

func run(ctx context.Context, o options) *summary {
	s := &summary{RunID: o.runID, Namespace: o.namespace, WatchListClientGate: watchListClientEnabled(),
		InitialObjects: []string{}, Created: []string{}, FinalObjects: []objectVersion{}, ClientErrors: []requestRecord{},
		Checks: []check{}, Failures: []string{}, InformerEvents: informerEvents{Deleted: []string{}}, CachedNamespaces: []string{}}
	sc := &scenario{o: o, s: s, events: &eventLog{}}
	informerRec, tenantRec, statusRec := &recorder{}, &recorder{}, &recorder{}
	sc.records = []*recorder{tenantRec, statusRec}
	defer func() {
		s.Reflector = summariseReflector(informerRec.snapshot())
		s.InformerEvents = sc.events.snapshot()
		for _, rec := range sc.records {
			for _, r := range rec.snapshot() {
				if r.Status < 200 || r.Status > 299 {
					s.ClientErrors = append(s.ClientErrors, r)
				}
			}
		}
		s.OK = len(s.Failures) == 0
	}()

	if !sc.expect("setup", sc.setup(informerRec, tenantRec, statusRec)) {
		return s
	}
	cacheCtx, stopCache := context.WithCancel(ctx)
	defer stopCache()
	if !sc.expect("informer syncs", sc.startInformer(ctx, cacheCtx)) {
		return s
	}
	claims, err := sc.createClaims(ctx)
	if !sc.expect("create HostClaims with the typed client", err) {
		return s
	}
	sc.expect("get returns what create returned", sc.getMatches(ctx, claims))
	sc.updateClaim(ctx, claims[0])
	sc.patchClaim(ctx, claims[1])
	sc.statusOfClaim(ctx, claims[2])
	sc.deleteClaim(ctx, claims[1])
	if sc.o.allNamespaces {
		sc.expect("a claim where the tenant cannot read is refused as an absent one is", sc.createUnreadable(ctx))
	}
	sc.expect("informer cache converges to a fresh LIST", sc.converge(ctx))
	sc.expect("informer saw the deletion", sc.sawDeletion())
	if sc.o.allNamespaces {
		sc.expect("informer on all namespaces holds only the readable namespaces' claims", sc.onlyReadable(ctx))
	}
	return s
}

func (sc *scenario) setup(informerRec, tenantRec, statusRec *recorder) error {
	scheme := newScheme()
	informerCfg, err := restConfig(sc.o.kubeconfig, "hostclaim-goclient/informer", informerRec)
	if err != nil {
		return err
	}
	tenantCfg, err := restConfig(sc.o.kubeconfig, "hostclaim-goclient/tenant", tenantRec)
	if err != nil {
		return err
	}
	statusCfg, err := restConfig(sc.o.statusKubeconfig, "hostclaim-goclient/status", statusRec)
	if err != nil {
		return err
	}
	// Direct clients (no cache): every read below goes to the server.
	if sc.tenant, err = client.New(tenantCfg, client.Options{Scheme: scheme}); err != nil {
		return fmt.Errorf("tenant client: %w", err)
	}
	if sc.status, err = client.New(statusCfg, client.Options{Scheme: scheme}); err != nil {
		return fmt.Errorf("status client: %w", err)
	}
	cacheOptions := cache.Options{Scheme: scheme}
	if !sc.o.allNamespaces {
		cacheOptions.DefaultNamespaces = map[string]cache.Config{sc.o.namespace: {}}
	}
	sc.cache, err = cache.New(informerCfg, cacheOptions)
	if err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	return nil
}

// startInformer starts the cache's HostClaim informer and waits for it to sync.
func (sc *scenario) startInformer(ctx, cacheCtx context.Context) error {
	informer, err := sc.cache.GetInformer(ctx, &bmov1alpha1.HostClaim{})
	if err != nil {
		return fmt.Errorf("get informer: %w", err)
	}
	if _, err := informer.AddEventHandler(sc.events.handler()); err != nil {
		return fmt.Errorf("add event handler: %w", err)
	}
	cacheErr := make(chan error, 1)
	go func() { cacheErr <- sc.cache.Start(cacheCtx) }()
	start := time.Now()
	syncCtx, cancel := context.WithTimeout(ctx, sc.o.syncTimeout)
	defer cancel()
	if !sc.cache.WaitForCacheSync(syncCtx) {
		select {
		case err := <-cacheErr:
			return fmt.Errorf("cache stopped before syncing: %v", err)
		default:
		}
		return fmt.Errorf("informer did not sync within %s (WatchListClient=%v: with WatchList on, the reflector needs the "+
			"\"k8s.io/initial-events-end\" bookmark; see the informer's requests in the summary)", sc.o.syncTimeout, sc.s.WatchListClientGate)
	}
	sc.s.SyncMillis = time.Since(start).Milliseconds()
	cached, err := sc.cachedVersions(ctx)
	if err != nil {
		return err
	}
	for _, v := range cached {
		sc.s.InitialObjects = append(sc.s.InitialObjects, v.Name)
	}
	return nil
}

func newClaim(namespace, name, runID string) *bmov1alpha1.HostClaim {
	return &bmov1alpha1.HostClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   namespace,
			Labels:      map[string]string{runLabel: runID},
			Annotations: map[string]string{"goclient.test/note": "created by hostclaim-goclient"},
		},
		Spec: bmov1alpha1.HostClaimSpec{
			PoweredOn: true,
			Image: &bmov1alpha1.Image{
				URL:          "http://images.example/ubuntu-24.04.qcow2",
				Checksum:     "http://images.example/ubuntu-24.04.qcow2.sha256sum",
				ChecksumType: bmov1alpha1.SHA256,
				DiskFormat:   ptr.To("qcow2"),
			},
			UserData: &corev1.SecretReference{Name: name + "-user-data"},
			HostSelector: bmov1alpha1.HostSelector{
				MatchLabels: map[string]string{"pool": "gold"},
				MatchExpressions: []bmov1alpha1.HostSelectorRequirement{
					{Key: "rack", Operator: selection.In, Values: []string{"r1", "r2"}},
				},
			},
			FailureDomain: "fd-1",
		},
	}
}

func (sc *scenario) createClaims(ctx context.Context) ([]*bmov1alpha1.HostClaim, error) {
	var claims []*bmov1alpha1.HostClaim
	for i := range 3 {
		claim := newClaim(sc.o.namespace, fmt.Sprintf("gc-%s-%d", sc.o.runID, i), sc.o.runID)
		want := claim.Spec.DeepCopy()
		if i == 0 {
			// Status sent on create must be dropped (status subresource semantics).
			claim.Status.PoweredOn = true
		}
		if err := sc.tenant.Create(ctx, claim); err != nil {
			return nil, fmt.Errorf("create %s: %w", claim.Name, err)
		}
		sc.s.Created = append(sc.s.Created, claim.Name)
		var problems []string
		if claim.UID == "" {
			problems = append(problems, "no uid")
		}
		if claim.ResourceVersion == "" {
			problems = append(problems, "no resourceVersion")
		}
		if claim.Generation != 1 {
			problems = append(problems, fmt.Sprintf("generation %d, want 1", claim.Generation))
		}
		if claim.CreationTimestamp.IsZero() {
			problems = append(problems, "no creationTimestamp")
		}
		if claim.Namespace != sc.o.namespace || claim.Labels[runLabel] != sc.o.runID {
			problems = append(problems, fmt.Sprintf("metadata not round-tripped: namespace %q labels %v", claim.Namespace, claim.Labels))
		}
		if !equality.Semantic.DeepEqual(*want, claim.Spec) {
			problems = append(problems, fmt.Sprintf("spec not round-tripped: sent %+v, got %+v", *want, claim.Spec))
		}
		if !equality.Semantic.DeepEqual(bmov1alpha1.HostClaimStatus{}, claim.Status) {
			problems = append(problems, fmt.Sprintf("status sent on create was kept: %+v", claim.Status))
		}
		if len(problems) > 0 {
			return nil, fmt.Errorf("created %s: %s", claim.Name, strings.Join(problems, "; "))
		}
		claims = append(claims, claim)
	}
	return claims, nil
}

func (sc *scenario) getMatches(ctx context.Context, claims []*bmov1alpha1.HostClaim) error {
	for _, want := range claims {
		got := &bmov1alpha1.HostClaim{}
		if err := sc.tenant.Get(ctx, client.ObjectKeyFromObject(want), got); err != nil {
			return fmt.Errorf("get %s: %w", want.Name, err)
		}
		if got.ResourceVersion != want.ResourceVersion || got.UID != want.UID || !equality.Semantic.DeepEqual(got.Spec, want.Spec) {
			return fmt.Errorf("get %s: rv %s uid %s spec %+v; create returned rv %s uid %s spec %+v",
				want.Name, got.ResourceVersion, got.UID, got.Spec, want.ResourceVersion, want.UID, want.Spec)
		}
	}
	return nil
}

// updateClaim: a spec update bumps generation; a metadata-only update does
// not; an update carrying a stale resourceVersion is a Conflict.
func (sc *scenario) updateClaim(ctx context.Context, original *bmov1alpha1.HostClaim) {
	stale := original.DeepCopy()
	updated := original.DeepCopy()
	updated.Spec.Image.URL = "http://images.example/ubuntu-26.04.qcow2"
	updated.Spec.PoweredOn = false
	want := updated.Spec.DeepCopy()
	ok := sc.expect("update spec bumps generation and resourceVersion", func() error {
		if err := sc.tenant.Update(ctx, updated); err != nil {
			return fmt.Errorf("update %s: %w", updated.Name, err)
		}
		if updated.Generation != original.Generation+1 {
			return fmt.Errorf("generation %d after a spec update, want %d", updated.Generation, original.Generation+1)
		}
		if updated.ResourceVersion == original.ResourceVersion {
			return fmt.Errorf("resourceVersion unchanged (%s) after an update", updated.ResourceVersion)
		}
		if !equality.Semantic.DeepEqual(*want, updated.Spec) {
			return fmt.Errorf("spec not updated: sent %+v, got %+v", *want, updated.Spec)
		}
		return nil
	}())
	if ok {
		sc.expect("metadata-only update keeps generation", func() error {
			relabelled := updated.DeepCopy()
			relabelled.Labels["goclient.test/touched"] = "yes"
			if err := sc.tenant.Update(ctx, relabelled); err != nil {
				return fmt.Errorf("update %s: %w", relabelled.Name, err)
			}
			if relabelled.Generation != updated.Generation {
				return fmt.Errorf("generation %d after a labels-only update, want %d", relabelled.Generation, updated.Generation)
			}
			if relabelled.ResourceVersion == updated.ResourceVersion {
				return errors.New("resourceVersion unchanged after a labels-only update")
			}
			if relabelled.Labels["goclient.test/touched"] != "yes" {
				return fmt.Errorf("label not stored: %v", relabelled.Labels)
			}
			return nil
		}())
	}
	sc.expect("update with a stale resourceVersion is a Conflict", func() error {
		stale.Spec.FailureDomain = "written-with-a-stale-resourceVersion"
		err := sc.tenant.Update(ctx, stale)
		if err == nil {
			return fmt.Errorf("update with stale resourceVersion %s succeeded (new rv %s): lost update", original.ResourceVersion, stale.ResourceVersion)
		}
		if !apierrors.IsConflict(err) {
			return fmt.Errorf("want 409 Conflict, got %s: %w", describeStatus(err), err)
		}
		if msg := err.Error(); !strings.Contains(msg, "the object has been modified; please apply your changes to the latest version and try again") {
			return fmt.Errorf("Conflict without kube's optimistic-lock wording: %q", msg)
		}
		current := &bmov1alpha1.HostClaim{}
		if err := sc.tenant.Get(ctx, client.ObjectKeyFromObject(original), current); err != nil {
			return err
		}
		if current.Spec.FailureDomain != original.Spec.FailureDomain {
			return fmt.Errorf("the rejected update was stored anyway: failureDomain %q", current.Spec.FailureDomain)
		}
		return nil
	}())
}

// patchClaim: a merge patch computed by client.MergeFrom, then one with the
// optimistic lock from a stale base (the resourceVersion in the patch is a precondition).
func (sc *scenario) patchClaim(ctx context.Context, original *bmov1alpha1.HostClaim) {
	sc.expect("merge patch (client.MergeFrom) applies spec and labels", func() error {
		patched := original.DeepCopy()
		patched.Labels["goclient.test/patched"] = "true"
		patched.Spec.FailureDomain = "fd-2"
		patched.Spec.HostSelector.MatchLabels["pool"] = "silver"
		patched.Spec.UserData = nil
		want := patched.Spec.DeepCopy()
		if err := sc.tenant.Patch(ctx, patched, client.MergeFrom(original)); err != nil {
			return fmt.Errorf("patch %s: %w", patched.Name, err)
		}
		if patched.Generation != original.Generation+1 {
			return fmt.Errorf("generation %d after a spec patch, want %d", patched.Generation, original.Generation+1)
		}
		if patched.ResourceVersion == original.ResourceVersion {
			return errors.New("resourceVersion unchanged after a patch")
		}
		if patched.Labels["goclient.test/patched"] != "true" || patched.Labels[runLabel] != sc.o.runID {
			return fmt.Errorf("labels after patch: %v", patched.Labels)
		}
		if !equality.Semantic.DeepEqual(*want, patched.Spec) {
			return fmt.Errorf("spec after patch: want %+v, got %+v", *want, patched.Spec)
		}
		return nil
	}())
	sc.expect("merge patch with optimistic lock from a stale base is a Conflict", func() error {
		stale := original.DeepCopy() // carries the pre-patch resourceVersion
		changed := stale.DeepCopy()
		changed.Spec.FailureDomain = "written-with-a-stale-base"
		err := sc.tenant.Patch(ctx, changed, client.MergeFromWithOptions(stale, client.MergeFromWithOptimisticLock{}))
		if err == nil {
			return errors.New("patch with a stale metadata.resourceVersion succeeded")
		}
		if !apierrors.IsConflict(err) {
			return fmt.Errorf("want 409 Conflict, got %s: %w", describeStatus(err), err)
		}
		return nil
	}())
}

// statusOfClaim: the tenant may not write status; a principal with update on
// hostclaims/status may, and only status changes; the main endpoint ignores status.
func (sc *scenario) statusOfClaim(ctx context.Context, original *bmov1alpha1.HostClaim) {
	now := metav1.NewTime(time.Now().UTC().Truncate(time.Second))
	desired := bmov1alpha1.HostClaimStatus{
		LastUpdated: &now,
		Conditions: []metav1.Condition{{
			Type: bmov1alpha1.AssociatedCondition, Status: metav1.ConditionTrue, Reason: bmov1alpha1.BareMetalHostAssociatedReason,
			Message: "bound by hostclaim-goclient", LastTransitionTime: now, ObservedGeneration: original.Generation,
		}},
		BareMetalHost: &bmov1alpha1.ObjectReference{Namespace: "infra", Name: "host-0"},
		HardwareData:  &bmov1alpha1.ObjectReference{Namespace: "infra", Name: "host-0"},
		PoweredOn:     true,
	}
	sc.expect("tenant Status().Update() is Forbidden", func() error {
		attempt := original.DeepCopy()
		attempt.Status = *desired.DeepCopy()
		err := sc.tenant.Status().Update(ctx, attempt)
		if err == nil {
			return errors.New("the tenant wrote hostclaims/status, which the shipped roles do not grant")
		}
		if !apierrors.IsForbidden(err) {
			return fmt.Errorf("want 403 Forbidden, got %s: %w", describeStatus(err), err)
		}
		return nil
	}())
	var written *bmov1alpha1.HostClaim
	ok := sc.expect("Status().Update() round-trips status and changes only status", func() error {
		current := &bmov1alpha1.HostClaim{}
		if err := sc.status.Get(ctx, client.ObjectKeyFromObject(original), current); err != nil {
			return fmt.Errorf("get as the status writer: %w", err)
		}
		before := current.DeepCopy()
		current.Status = *desired.DeepCopy()
		// Spec and metadata changes on the status endpoint must be ignored.
		current.Spec.FailureDomain = "written-through-status"
		current.Labels["goclient.test/through-status"] = "true"
		if err := sc.status.Status().Update(ctx, current); err != nil {
			return fmt.Errorf("status update: %w", err)
		}
		var problems []string
		if !equality.Semantic.DeepEqual(desired, current.Status) {
			problems = append(problems, fmt.Sprintf("status: sent %s, got %s", jsonString(desired), jsonString(current.Status)))
		}
		if current.Generation != before.Generation {
			problems = append(problems, fmt.Sprintf("generation %d after a status update, want %d", current.Generation, before.Generation))
		}
		if current.ResourceVersion == before.ResourceVersion {
			problems = append(problems, "resourceVersion unchanged after a status update")
		}
		if current.Spec.FailureDomain != before.Spec.FailureDomain {
			problems = append(problems, fmt.Sprintf("status update changed spec.failureDomain to %q", current.Spec.FailureDomain))
		}
		if _, found := current.Labels["goclient.test/through-status"]; found {
			problems = append(problems, "status update changed metadata.labels")
		}
		if len(problems) > 0 {
			return errors.New(strings.Join(problems, "; "))
		}
		written = current
		return nil
	}())
	if !ok {
		return
	}
	sc.expect("tenant reads the status written", func() error {
		got := &bmov1alpha1.HostClaim{}
		if err := sc.tenant.Get(ctx, client.ObjectKeyFromObject(original), got); err != nil {
			return err
		}
		if got.ResourceVersion != written.ResourceVersion || !equality.Semantic.DeepEqual(desired, got.Status) {
			return fmt.Errorf("tenant sees rv %s status %s; writer got rv %s status %s",
				got.ResourceVersion, jsonString(got.Status), written.ResourceVersion, jsonString(desired))
		}
		return nil
	}())
	sc.expect("main-endpoint update ignores status", func() error {
		got := &bmov1alpha1.HostClaim{}
		if err := sc.tenant.Get(ctx, client.ObjectKeyFromObject(original), got); err != nil {
			return err
		}
		got.Spec.PoweredOn = false
		got.Status.PoweredOn = false
		got.Status.Conditions = nil
		if err := sc.tenant.Update(ctx, got); err != nil {
			return fmt.Errorf("update: %w", err)
		}
		if got.Spec.PoweredOn {
			return errors.New("spec.poweredOn not updated")
		}
		if !equality.Semantic.DeepEqual(desired, got.Status) {
			return fmt.Errorf("status changed through the main endpoint: %s", jsonString(got.Status))
		}
		return nil
	}())
}

// deleteClaim: DeleteOptions are honoured (a dry run keeps the object, a
// stale resourceVersion precondition is a Conflict), then a real delete.
func (sc *scenario) deleteClaim(ctx context.Context, claim *bmov1alpha1.HostClaim) {
	sc.s.Deleted = claim.Name
	current := &bmov1alpha1.HostClaim{}
	if !sc.expect("get before delete", sc.tenant.Get(ctx, client.ObjectKeyFromObject(claim), current)) {
		return
	}
	sc.expect("delete with dryRun=All keeps the object", func() error {
		if err := sc.tenant.Delete(ctx, current.DeepCopy(), client.DryRunAll); err != nil {
			return fmt.Errorf("dry-run delete: %w", err)
		}
		after := &bmov1alpha1.HostClaim{}
		if err := sc.tenant.Get(ctx, client.ObjectKeyFromObject(claim), after); err != nil {
			return fmt.Errorf("get after a dry-run delete: want the object unchanged, got %s: %w", describeStatus(err), err)
		}
		if after.ResourceVersion != current.ResourceVersion {
			return fmt.Errorf("resourceVersion %s after a dry-run delete, want %s", after.ResourceVersion, current.ResourceVersion)
		}
		return nil
	}())
	sc.expect("delete with a stale resourceVersion precondition is a Conflict", func() error {
		stale := claim.ResourceVersion // from create; the claim was patched since
		err := sc.tenant.Delete(ctx, current.DeepCopy(), client.Preconditions{ResourceVersion: &stale})
		if err == nil {
			return fmt.Errorf("delete with precondition resourceVersion=%s succeeded (current %s)", stale, current.ResourceVersion)
		}
		if !apierrors.IsConflict(err) {
			return fmt.Errorf("want 409 Conflict, got %s: %w", describeStatus(err), err)
		}
		return nil
	}())
	sc.expect("delete removes the object (NotFound afterwards)", func() error {
		if err := sc.tenant.Delete(ctx, claim); err != nil {
			return fmt.Errorf("delete %s: %w", claim.Name, err)
		}
		got := &bmov1alpha1.HostClaim{}
		err := sc.tenant.Get(ctx, client.ObjectKeyFromObject(claim), got)
		if err == nil {
			return fmt.Errorf("%s still readable after delete (deletionTimestamp %v, finalizers %v)", claim.Name, got.DeletionTimestamp, got.Finalizers)
		}
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("get after delete: want 404 NotFound, got %s: %w", describeStatus(err), err)
		}
		err = sc.tenant.Delete(ctx, claim)
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("second delete: want 404 NotFound, got %s: %v", describeStatus(err), err)
		}
		return nil
	}())
}

// converge polls until the informer's cache holds exactly the names and
// resourceVersions of a fresh LIST from the server.
func (sc *scenario) converge(ctx context.Context) error {
	start := time.Now()
	deadline := start.Add(sc.o.convergeTimeout)
	var last string
	for {
		listed := &bmov1alpha1.HostClaimList{}
		// A failed LIST is retried until the deadline: this check is about the informer.
		if err := sc.tenant.List(ctx, listed, client.InNamespace(sc.o.namespace)); err != nil {
			last = fmt.Sprintf("list failed: %s: %v", describeStatus(err), err)
		} else {
			server := make([]objectVersion, 0, len(listed.Items))
			for _, item := range listed.Items {
				server = append(server, objectVersion{item.Name, item.ResourceVersion})
			}
			sortVersions(server)
			cached, err := sc.cachedVersions(ctx)
			if err != nil {
				return err
			}
			if slices.Equal(server, cached) {
				sc.s.ConvergedMillis = time.Since(start).Milliseconds()
				sc.s.FinalObjects = server
				return sc.finalContents(listed.Items)
			}
			last = fmt.Sprintf("server list %v, informer cache %v", server, cached)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not converged after %s: %s", sc.o.convergeTimeout, last)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w while converging: %s", ctx.Err(), last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// finalContents checks that the run's objects in the server's list are what
// the scenario left: the deleted one absent, the others present.
func (sc *scenario) finalContents(items []bmov1alpha1.HostClaim) error {
	names := map[string]bool{}
	for _, item := range items {
		names[item.Name] = true
	}
	for _, name := range sc.s.Created {
		if name == sc.s.Deleted && names[name] {
			return fmt.Errorf("deleted %s is still listed", name)
		}
		if name != sc.s.Deleted && !names[name] {
			return fmt.Errorf("%s is missing from the list", name)
		}
	}
	return nil
}

func (sc *scenario) sawDeletion() error {
	if sc.s.Deleted == "" {
		return errors.New("nothing was deleted")
	}
	if !slices.Contains(sc.events.snapshot().Deleted, sc.s.Deleted) {
		return fmt.Errorf("no delete notification for %s; deletions seen: %v", sc.s.Deleted, sc.events.snapshot().Deleted)
	}
	return nil
}

func (sc *scenario) cachedVersions(ctx context.Context) ([]objectVersion, error) {
	cachedList := &bmov1alpha1.HostClaimList{}
	if err := sc.cache.List(ctx, cachedList, client.InNamespace(sc.o.namespace)); err != nil {
		return nil, fmt.Errorf("list from the informer cache: %w", err)
	}
	out := make([]objectVersion, 0, len(cachedList.Items))
	for _, item := range cachedList.Items {
		out = append(out, objectVersion{item.Name, item.ResourceVersion})
	}
	sortVersions(out)
	return out, nil
}

func sortVersions(v []objectVersion) {
	slices.SortFunc(v, func(a, b objectVersion) int { return strings.Compare(a.Name, b.Name) })
}

func describeStatus(err error) string {
	if err == nil {
		return "success"
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		st := status.Status()
		return fmt.Sprintf("%d %s", st.Code, st.Reason)
	}
	return "a non-API error"
}

// eventLog counts the informer's notifications.
type eventLog struct {
	mu      sync.Mutex
	added   int
	updated int
	deleted map[string]bool
}

func (e *eventLog) handler() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(any) {
			e.mu.Lock()
			e.added++
			e.mu.Unlock()
		},
		UpdateFunc: func(any, any) {
			e.mu.Lock()
			e.updated++
			e.mu.Unlock()
		},
		DeleteFunc: func(obj any) {
			if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = tombstone.Obj
			}
			claim, ok := obj.(*bmov1alpha1.HostClaim)
			if !ok {
				return
			}
			e.mu.Lock()
			if e.deleted == nil {
				e.deleted = map[string]bool{}
			}
			e.deleted[claim.Name] = true
			e.mu.Unlock()
		},
	}
}

func (e *eventLog) snapshot() informerEvents {
	e.mu.Lock()
	defer e.mu.Unlock()
	deleted := slices.Sorted(maps.Keys(e.deleted))
	if deleted == nil {
		deleted = []string{}
	}
	return informerEvents{Added: e.added, Updated: e.updated, Deleted: deleted}
}
