package gateway

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
	asv1 "sigs.k8s.io/agent-sandbox/api/v1beta1"
	asfake "sigs.k8s.io/agent-sandbox/clients/k8s/clientset/versioned/fake"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/kube/podspec"
	"github.com/sbxhq/sbx/wire"
)

// TestIndexesFindEachTeamsOwn: the caches' team, name and id indexes give
// each team its own sandboxes (the same name in two teams included), the
// bootstrap admin every team's, and a Sandbox made with kubectl by its
// object's name or derived id.
func TestIndexesFindEachTeamsOwn(t *testing.T) {
	obj := func(id, name, team string) *asv1.Sandbox {
		o := podspec.SandboxFor(id, wire.CreateSandboxRequest{Name: name}, team)
		o.Namespace = ns
		return o
	}
	a := obj("sbx-aaaaaaaaaaaaaaaa", "box", "team-a")
	b := obj("sbx-bbbbbbbbbbbbbbbb", "box", "team-b")
	b2 := obj("sbx-cccccccccccccccc", "other", "team-b")
	byHand := obj("sbx-dddddddddddddddd", "", "team-a")
	byHand.Name = "made-with-kubectl"
	elsewhere := obj("sbx-eeeeeeeeeeeeeeee", "box", "team-a")
	elsewhere.Namespace = "not-sbx"
	agents := asfake.NewSimpleClientset()
	c := NewCluster(kubefake.NewClientset(), agents, ns)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if err := c.Start(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, o := range []*asv1.Sandbox{a, b, b2, byHand, elsewhere} {
		if _, err := agents.AgentsV1beta1().Sandboxes(o.Namespace).Create(ctx, o, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.waitFor(ctx, func() (bool, error) { return len(c.index.List()) == 4, nil }); err != nil {
		t.Fatal(err) // the namespace's four (the informer watches sbx only)
	}
	as := func(team string) context.Context {
		return auth.WithPrincipal(ctx, auth.Principal{KeyID: "k-" + team, Team: team})
	}
	for _, tc := range []struct {
		ctx        context.Context
		ref, want  string // want "": not found
		listLength int
	}{
		{as("team-a"), "box", a.Name, 2},
		{as("team-b"), "box", b.Name, 2},
		{as("team-a"), b.Name, "", 2},
		{as("team-b"), "other", b2.Name, 2},
		{as("team-a"), "other", "", 2},
		{as("team-a"), "made-with-kubectl", "made-with-kubectl", 2},
		{as("team-a"), podspec.IDForPod(ns, "made-with-kubectl"), "made-with-kubectl", 2},
		{as("team-b"), "made-with-kubectl", "", 2},
		{auth.WithPrincipal(ctx, auth.Admin), b2.Name, b2.Name, 4},
	} {
		e, err := c.find(tc.ctx, tc.ref)
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("%s found by another team: %s", tc.ref, e.obj.Name)
		case tc.want != "" && (err != nil || e.obj.Name != tc.want):
			t.Errorf("%s: %v %v, want %s", tc.ref, e.obj, err, tc.want)
		}
		list, err := c.list(tc.ctx)
		if err != nil || len(list) != tc.listLength {
			t.Errorf("list: %d, %v; want %d", len(list), err, tc.listLength)
		}
		for _, e := range list {
			if !auth.Sees(tc.ctx, e.team) || e.obj.Namespace != ns {
				t.Errorf("list has %s of team %s in %s", e.obj.Name, e.team, e.obj.Namespace)
			}
		}
	}
}
