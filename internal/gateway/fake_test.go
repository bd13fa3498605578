package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	kubefake "k8s.io/client-go/kubernetes/fake"
	asv1 "sigs.k8s.io/agent-sandbox/api/v1beta1"
	asfake "sigs.k8s.io/agent-sandbox/clients/k8s/clientset/versioned/fake"

	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/authz"
	"github.com/sbxhq/sbx/internal/kube/podspec"
	"github.com/sbxhq/sbx/wire"
)

// The unit tests run the gateway over client-go's fake clientsets (the
// watch caches are real informers over them), a stand-in for agent-sandbox's
// controller and kube-scheduler (fakeController: a Running Sandbox gets a
// ready pod on a host node, a Suspended or deleted one loses it) and fake
// sbx hosts (httptest servers that record what reaches them).

const (
	ns        = "sbx"
	userKey   = "gateway-admin-key"
	hostToken = "hosts-admin-key"
)

type fixture struct {
	t      *testing.T
	kube   *kubefake.Clientset
	agents *asfake.Clientset
	gw     *httptest.Server
	hosts  map[string]*fakeHost // node name -> host
	// cluster is the gateway's view (a test may serve another gateway over it).
	cluster *Cluster
}

func newFixture(t *testing.T, nodes ...string) *fixture {
	t.Helper()
	return newFixtureWithTimeout(t, 10*time.Second, nodes...)
}

// unschedulable is an image the fake scheduler never places.
const unschedulable = "unschedulable"

func newFixtureWithTimeout(t *testing.T, readyTimeout time.Duration, nodes ...string) *fixture {
	t.Helper()
	if len(nodes) == 0 {
		nodes = []string{"host-a"}
	}
	f := &fixture{t: t, kube: kubefake.NewClientset(), agents: asfake.NewSimpleClientset(), hosts: map[string]*fakeHost{}}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	for _, n := range nodes {
		h := newFakeHost(t)
		f.hosts[n] = h
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: map[string]string{podspec.LabelHost: "true"},
			Annotations: map[string]string{podspec.AnnotationAPI: h.srv.URL}},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
		if _, err := f.kube.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	c := NewCluster(f.kube, f.agents, ns)
	if err := c.Start(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	go f.fakeController(ctx, c, nodes)
	f.cluster = c
	f.gw = httptest.NewServer(New(Config{Cluster: c, Gate: &authz.Gate{Keys: auth.AdminToken(userKey)}, HostToken: hostToken, ReadyTimeout: readyTimeout}))
	t.Cleanup(f.gw.Close)
	return f
}

// fakeController plays agent-sandbox and kube-scheduler: every Running
// Sandbox has a ready pod, placed round-robin over the nodes; a Suspended
// or deleted one has none.
func (f *fixture) fakeController(ctx context.Context, c *Cluster, nodes []string) {
	next := 0
	for {
		c.mu.Lock()
		ch := c.changed
		c.mu.Unlock()
		sbs, _ := c.sandboxes.List(labels.Everything())
		want := map[string]bool{}
		for _, sb := range sbs {
			if sb.Spec.OperatingMode != asv1.SandboxOperatingModeRunning || sb.Spec.PodTemplate.Spec.Containers[0].Image == unschedulable {
				continue
			}
			want[sb.Name] = true
			if _, err := c.pods.Get(sb.Name); err == nil {
				continue
			}
			tpl := sb.Spec.PodTemplate
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: sb.Name, Namespace: ns, Labels: tpl.ObjectMeta.Labels, Annotations: tpl.ObjectMeta.Annotations},
				Spec: tpl.Spec}
			pod.Spec.NodeName = nodes[next%len(nodes)]
			next++
			pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
				ContainerStatuses: []corev1.ContainerStatus{{Name: podspec.ContainerName, Ready: true, // as a host reports a started sandbox
					State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}}}}
			f.hosts[pod.Spec.NodeName].add(podspec.IDForPod(ns, sb.Name))
			if _, err := f.kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				f.t.Errorf("fake controller: %v", err)
			}
		}
		pods, _ := c.pods.List(labels.Everything())
		for _, p := range pods {
			if !want[p.Name] {
				f.hosts[p.Spec.NodeName].remove(p.Name)
				f.kube.CoreV1().Pods(ns).Delete(ctx, p.Name, metav1.DeleteOptions{})
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-ch:
		}
	}
}

// call sends a request to the gateway with the user's key.
func (f *fixture) call(method, path, body string) (*http.Response, []byte) {
	f.t.Helper()
	return f.callAs(userKey, method, path, body)
}

func (f *fixture) callAs(key, method, path, body string) (*http.Response, []byte) {
	f.t.Helper()
	req, err := http.NewRequest(method, f.gw.URL+path, strings.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// create makes a sandbox through the gateway.
func (f *fixture) create(body string) wire.Sandbox {
	f.t.Helper()
	resp, b := f.call("POST", "/v1/sandboxes", body)
	if resp.StatusCode != http.StatusCreated {
		f.t.Fatalf("create: %d %s", resp.StatusCode, b)
	}
	var sb wire.Sandbox
	if err := json.Unmarshal(b, &sb); err != nil {
		f.t.Fatal(err)
	}
	return sb
}

func (f *fixture) object(id string) *asv1.Sandbox {
	f.t.Helper()
	o, err := f.agents.AgentsV1beta1().Sandboxes(ns).Get(context.Background(), id, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return o
}

// wantError checks an answer in the API's error format.
func wantError(t *testing.T, resp *http.Response, body []byte, status int, code wire.Code) {
	t.Helper()
	var e struct {
		Error struct {
			Code    wire.Code `json:"code"`
			Message string    `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || resp.StatusCode != status || e.Error.Code != code || e.Error.Message == "" {
		t.Fatalf("want %d %s, got %d %s", status, code, resp.StatusCode, body)
	}
}

// fakeHost is an sbx host's API: it knows the sandboxes placed on it,
// echoes what reaches it, streams NDJSON and serves a WebSocket echo.
type fakeHost struct {
	srv *httptest.Server

	mu        sync.Mutex
	sandboxes map[string]bool
	seen      []seenRequest
	release   chan struct{} // the second line of a stream waits for it
}

type seenRequest struct{ Method, Path, RawQuery, Auth, Principal, AccessToken string }

func newFakeHost(t *testing.T) *fakeHost {
	h := &fakeHost{sandboxes: map[string]bool{}, release: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/sandboxes", func(w http.ResponseWriter, r *http.Request) {
		h.note(r)
		h.mu.Lock()
		var out []wire.Sandbox
		for id := range h.sandboxes {
			out = append(out, h.record(id))
		}
		h.mu.Unlock()
		json.NewEncoder(w).Encode(out)
	})
	mux.HandleFunc("GET /v1/sandboxes/{id}", func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		ok := h.sandboxes[r.PathValue("id")]
		h.mu.Unlock()
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		json.NewEncoder(w).Encode(h.record(r.PathValue("id")))
	})
	mux.HandleFunc("POST /v1/sandboxes/{id}/exec", func(w http.ResponseWriter, r *http.Request) {
		h.note(r)
		w.Header().Set("Content-Type", "application/x-ndjson")
		io.WriteString(w, `{"type":"stdout","data":"one"}`+"\n")
		w.(http.Flusher).Flush()
		if r.URL.Query().Get("stream") == "true" {
			<-h.release
		}
		io.WriteString(w, `{"type":"exit","exitCode":0}`+"\n")
	})
	mux.HandleFunc("GET /v1/sandboxes/{id}/ptys/{pty}/attach", func(w http.ResponseWriter, r *http.Request) {
		h.note(r)
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		for {
			typ, b, err := c.Read(r.Context())
			if err != nil {
				return
			}
			c.Write(r.Context(), typ, append([]byte("echo:"), b...))
		}
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		h.note(r)
		json.NewEncoder(w).Encode(map[string]string{"path": r.URL.Path})
	})
	h.srv = httptest.NewServer(mux)
	t.Cleanup(h.srv.Close)
	return h
}

// record is what the host says of a sandbox it runs ("host" in reason
// tells a test the answer came from the host).
func (h *fakeHost) record(id string) wire.Sandbox {
	return wire.Sandbox{ID: id, State: wire.StateStarted, Reason: "host", Image: "base", Labels: map[string]string{}}
}

func (h *fakeHost) note(r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seen = append(h.seen, seenRequest{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Authorization"), r.Header.Get(auth.HeaderPrincipal), r.Header.Get("X-Access-Token")})
}

func (h *fakeHost) add(id string)    { h.mu.Lock(); h.sandboxes[id] = true; h.mu.Unlock() }
func (h *fakeHost) remove(id string) { h.mu.Lock(); delete(h.sandboxes, id); h.mu.Unlock() }

func (h *fakeHost) requests() []seenRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]seenRequest(nil), h.seen...)
}

// readLine reads one line of an NDJSON stream.
func readLine(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(line)
}
