package node

import (
	"context"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sbxhq/sbx/internal/agentapi"
	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/kube/podspec"
	"github.com/sbxhq/sbx/internal/sandbox"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// fakeSandboxes records what the provider asks of the Manager.
type fakeSandboxes struct {
	mu        sync.Mutex
	local     map[string]*store.Sandbox
	transfers map[string]string // id → owner
	calls     []string
	changed   chan struct{}
	claims    map[string]string // id → the pod that holds its claim
}

func newFake() *fakeSandboxes {
	return &fakeSandboxes{local: map[string]*store.Sandbox{}, transfers: map[string]string{}, changed: make(chan struct{})}
}

func (f *fakeSandboxes) record(s string) { f.calls = append(f.calls, s) }

func (f *fakeSandboxes) Get(_ context.Context, id string) (*store.Sandbox, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if sb, ok := f.local[id]; ok {
		c := *sb
		return &c, nil
	}
	return nil, errdefs.NotFound(wire.CodeSandboxNotFound, "no %s", id)
}

func (f *fakeSandboxes) List(context.Context, store.Filter) ([]*store.Sandbox, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*store.Sandbox
	for _, sb := range f.local {
		out = append(out, sb)
	}
	return out, nil
}

func (f *fakeSandboxes) CreateWithID(_ context.Context, id string, req wire.CreateSandboxRequest) (*store.Sandbox, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("create " + id + " " + req.Image)
	sb := &store.Sandbox{ID: id, State: wire.StateStarted, Spec: store.Spec{Image: req.Image, Labels: req.Labels}}
	f.local[id] = sb
	return sb, nil
}

func (f *fakeSandboxes) Start(_ context.Context, id string) (*store.Sandbox, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("start " + id)
	return f.local[id], nil
}

func (f *fakeSandboxes) Delete(_ context.Context, id string, _ bool) (*store.Sandbox, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("delete " + id)
	delete(f.local, id)
	return nil, nil
}

func (f *fakeSandboxes) Handoff(_ context.Context, id, owner, _ string, _ sandbox.StopOptions) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("handoff " + id + " " + owner)
	delete(f.local, id)
	f.transfers[id] = owner
	return nil
}

func (f *fakeSandboxes) Forget(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("forget " + id)
	delete(f.local, id)
	return nil
}

func (f *fakeSandboxes) Manifest(_ context.Context, id string) (*sandbox.Transfer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	owner, ok := f.transfers[id]
	if !ok {
		return nil, nil
	}
	return &sandbox.Transfer{ID: id, Owner: owner}, nil
}

func (f *fakeSandboxes) TakeOver(_ context.Context, id string, labels map[string]string) (*store.Sandbox, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("takeover " + id)
	sb := &store.Sandbox{ID: id, State: wire.StateStarted, Spec: store.Spec{Labels: labels}}
	f.local[id] = sb
	return sb, nil
}

func (f *fakeSandboxes) DropTransfer(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("drop " + id)
	delete(f.transfers, id)
	return nil
}

func (f *fakeSandboxes) Agent(context.Context, string) (*agentapi.Client, *store.Sandbox, error) {
	return nil, nil, errdefs.Unavailable(wire.CodeAgentError, "no agent in this fake")
}

func (f *fakeSandboxes) MainLogPath(*store.Sandbox) (string, error) { return "", nil }
func (f *fakeSandboxes) EventsChanged() <-chan struct{}             { return f.changed }
func (f *fakeSandboxes) SetLifeOwner(sandbox.LifeOwner)             {}
func (f *fakeSandboxes) Claim(_ context.Context, id, pod string) (sandbox.Claim, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	prev := sandbox.Claim{Pod: f.claims[id]}
	if f.claims == nil {
		f.claims = map[string]string{}
	}
	f.claims[id] = pod
	return prev, nil
}
func (f *fakeSandboxes) Freeze(_ context.Context, id string, frozen bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record(map[bool]string{true: "freeze ", false: "thaw "}[frozen] + id)
	return nil
}
func (f *fakeSandboxes) SetRecovery(_ context.Context, id string, rec *wire.Recovery) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("recovered " + id + " from " + rec.From)
	return nil
}
func (f *fakeSandboxes) Checkpoint(context.Context, string, string, string, string) (sandbox.Checkpointed, error) {
	return sandbox.Checkpointed{}, nil
}

func (f *fakeSandboxes) history() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.calls, "; ")
}

type fakeOwners map[string]bool

func (o fakeOwners) KeepArchive(_ context.Context, ns, name string, uid types.UID) (bool, error) {
	return o[ns+"/"+name] && uid == ownerUID(name), nil
}

// Suspend and Delete note what was asked as keys "suspend ns/name uid"
// and "delete ns/name uid".
func (o fakeOwners) Suspend(_ context.Context, ns, name string, uid types.UID) error {
	o["suspend "+ns+"/"+name+" "+string(uid)] = true
	return nil
}

func (o fakeOwners) Delete(_ context.Context, ns, name string, uid types.UID) error {
	o["delete "+ns+"/"+name+" "+string(uid)] = true
	return nil
}

// ownerUID is the UID of the Sandbox object of sandboxPod(name, true).
func ownerUID(name string) types.UID { return types.UID("uid-" + name) }

func sandboxPod(name string, owned bool) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "sbx"},
		Spec:       corev1.PodSpec{NodeName: "h1", Containers: []corev1.Container{{Name: "main", Image: "base"}}},
	}
	if owned {
		pod.OwnerReferences = []metav1.OwnerReference{{Kind: "Sandbox", Name: name, UID: ownerUID(name)}}
	}
	return pod
}

func TestCreatePodMakesTheSandboxAndReportsReady(t *testing.T) {
	f := newFake()
	p := NewProvider(f, fakeOwners{}, nil, "h1", "10.0.0.1", nil)
	var sent []*corev1.Pod
	p.NotifyPods(t.Context(), func(pod *corev1.Pod) { sent = append(sent, pod) })
	pod := sandboxPod("box", true)
	if err := p.CreatePod(t.Context(), pod); err != nil {
		t.Fatal(err)
	}
	id := podspec.IDForPod("sbx", "box")
	if got := f.history(); got != "create "+id+" base" {
		t.Fatalf("calls: %s", got)
	}
	sb, _ := f.Get(t.Context(), id)
	if sb.Spec.Labels[LabelPodName] != "box" || sb.Spec.Labels[LabelPodNamespace] != "sbx" {
		t.Fatalf("labels: %v", sb.Spec.Labels)
	}
	if len(sent) != 1 || sent[0].Status.Phase != corev1.PodRunning || !podReady(sent[0]) || sent[0].Status.HostIP != "10.0.0.1" {
		t.Fatalf("status sent: %+v", sent)
	}
	// The same status again is not sent again.
	p.sendStatus(t.Context(), key("sbx", "box"))
	if len(sent) != 1 {
		t.Fatalf("%d statuses sent, want 1", len(sent))
	}
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func TestCreatePodTakesOverAHandedOffSandbox(t *testing.T) {
	f := newFake()
	id := podspec.IDForPod("sbx", "box")
	f.transfers[id] = string(ownerUID("box"))
	p := NewProvider(f, fakeOwners{}, nil, "h1", "10.0.0.1", nil)
	if err := p.CreatePod(t.Context(), sandboxPod("box", true)); err != nil {
		t.Fatal(err)
	}
	if got := f.history(); got != "takeover "+id {
		t.Fatalf("calls: %s", got)
	}
}

// A Sandbox deleted and made again under the same name has the same sbx id
// but another UID: the old one's archive is dropped, not taken over.
func TestCreatePodDoesNotTakeOverAnotherOwnersArchive(t *testing.T) {
	f := newFake()
	id := podspec.IDForPod("sbx", "box")
	f.transfers[id] = "uid-of-a-deleted-object"
	p := NewProvider(f, fakeOwners{}, nil, "h1", "10.0.0.1", nil)
	if err := p.CreatePod(t.Context(), sandboxPod("box", true)); err != nil {
		t.Fatal(err)
	}
	if got := f.history(); got != "drop "+id+"; create "+id+" base" {
		t.Fatalf("calls: %s", got)
	}
}

func TestDeletePodHandsOffOrDeletes(t *testing.T) {
	f := newFake()
	p := NewProvider(f, fakeOwners{"sbx/kept": true}, nil, "h1", "10.0.0.1", nil)
	var sent []*corev1.Pod
	p.NotifyPods(t.Context(), func(pod *corev1.Pod) { sent = append(sent, pod) })
	for _, name := range []string{"kept", "gone"} {
		if err := p.CreatePod(t.Context(), sandboxPod(name, true)); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"kept", "gone"} {
		if err := p.DeletePod(t.Context(), sandboxPod(name, true)); err != nil {
			t.Fatal(err)
		}
	}
	kept, gone := podspec.IDForPod("sbx", "kept"), podspec.IDForPod("sbx", "gone")
	if got := f.history(); !strings.Contains(got, "handoff "+kept+" "+string(ownerUID("kept"))) || !strings.Contains(got, "delete "+gone+"; drop "+gone) {
		t.Fatalf("calls: %s", got)
	}
	last := sent[len(sent)-1]
	if last.Status.Phase != corev1.PodSucceeded || last.Name != "gone" {
		t.Fatalf("last status: %s %s", last.Name, last.Status.Phase)
	}
	if pods, _ := p.GetPods(t.Context()); len(pods) != 0 {
		t.Fatalf("pods left: %d", len(pods))
	}
}

func TestAfterARestartStaleSandboxesAreForgottenNotArchived(t *testing.T) {
	f := newFake()
	id := podspec.IDForPod("sbx", "old")
	f.local[id] = &store.Sandbox{ID: id, State: wire.StateStopped, Spec: store.Spec{Labels: map[string]string{LabelPodNamespace: "sbx", LabelPodName: "old"}}}
	f.local["sbx-aaaaaaaaaaaaaaaa"] = &store.Sandbox{ID: "sbx-aaaaaaaaaaaaaaaa", State: wire.StateStarted} // made through the API: no pod
	p := NewProvider(f, fakeOwners{"sbx/old": true}, nil, "h1", "10.0.0.1", nil)
	pods, err := p.GetPods(t.Context())
	if err != nil || len(pods) != 1 || pods[0].Name != "old" {
		t.Fatalf("pods after a restart: %v %v", pods, err)
	}
	// virtual-kubelet deletes a pod Kubernetes no longer has with the
	// provider's own copy of it.
	if err := p.DeletePod(t.Context(), pods[0]); err != nil {
		t.Fatal(err)
	}
	if got := f.history(); got != "forget "+id {
		t.Fatalf("calls: %s (a stale copy must not overwrite the newer archive)", got)
	}
}

func TestAPodThatCannotBeASandboxFails(t *testing.T) {
	f := newFake()
	p := NewProvider(f, nil, nil, "h1", "10.0.0.1", nil)
	pod := sandboxPod("two", false)
	pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: "sidecar"})
	if err := p.CreatePod(t.Context(), pod); err != nil {
		t.Fatal(err)
	}
	st, err := p.GetPodStatus(t.Context(), "sbx", "two")
	if err != nil || st.Phase != corev1.PodFailed || !strings.Contains(st.Message, "2 containers") {
		t.Fatalf("status: %+v %v", st, err)
	}
	if got := f.history(); got != "" {
		t.Fatalf("calls: %s", got)
	}
}

func TestTailLines(t *testing.T) {
	for in, want := range map[string]string{"a\nb\nc\n": "b\nc\n", "a\nb\nc": "b\nc", "c\n": "c\n", "": ""} {
		if got := string(tailLines([]byte(in), 2)); got != want {
			t.Errorf("tailLines(%q, 2) = %q, want %q", in, got, want)
		}
	}
}

// An update of a pod that is being deleted, after DeletePod forgot it,
// does not start its sandbox again (it would outlive the pod).
func TestUpdateOfADeletedPodMakesNoSandbox(t *testing.T) {
	f := newFake()
	p := NewProvider(f, fakeOwners{}, nil, "h1", "10.0.0.1", nil)
	pod := sandboxPod("box", false)
	if err := p.CreatePod(t.Context(), pod); err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	pod.DeletionTimestamp = &now
	if err := p.DeletePod(t.Context(), pod); err != nil {
		t.Fatal(err)
	}
	if err := p.UpdatePod(t.Context(), pod); err != nil {
		t.Fatal(err)
	}
	id := podspec.IDForPod("sbx", "box")
	if _, err := f.Get(t.Context(), id); err == nil {
		t.Fatalf("the deleted pod's sandbox was made again; calls: %s", f.history())
	}
}

// A pod whose predecessor ran on a host that was lost before anything was
// saved comes back fresh, and says so; the first pod of a sandbox does not.
func TestCreatePodAfterAHostLossWithNothingSavedSaysSo(t *testing.T) {
	f := newFake()
	id := podspec.IDForPod("sbx", "box")
	p := NewProvider(f, fakeOwners{}, nil, "h1", "10.0.0.1", nil)
	pod := sandboxPod("box", true)
	pod.UID = "pod-1"
	if err := p.CreatePod(t.Context(), pod); err != nil {
		t.Fatal(err)
	}
	if got := f.history(); got != "create "+id+" base" {
		t.Fatalf("first pod: %s", got)
	}
	delete(f.local, id) // its host is lost
	f.calls = nil
	next := sandboxPod("box", true)
	next.UID = "pod-2"
	if err := p.CreatePod(t.Context(), next); err != nil {
		t.Fatal(err)
	}
	if got := f.history(); got != "create "+id+" base; recovered "+id+" from fresh" {
		t.Fatalf("successor: %s", got)
	}
}
