package integration

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"

	"github.com/sbxhq/sbx/internal/kube/podspec"
	"github.com/sbxhq/sbx/sdk"
	"github.com/sbxhq/sbx/wire"
)

// fakeHosts are kwok-style sbx hosts: Node objects the test keeps alive
// with their Leases, a watch that marks every pod kube-scheduler binds to
// one of them Running and Ready, and one HTTP server that answers the
// host API calls the gateway makes (a sandbox's record, a host's list) at
// http://addr/h/<node>. A sandbox on them costs a pod and a map entry, so
// one machine can carry thousands; everything above the kubelet — the
// API server, kube-scheduler, agent-sandbox's controller and the gateway
// replicas — is the real thing.
type fakeHosts struct {
	t     *testing.T
	kube  kubernetes.Interface
	nodes map[string]bool
	addr  string

	mu     sync.Mutex
	onNode map[string]map[string]wire.Sandbox // node → id → record
	lists  int                                // host lists asked for
}

func startFakeHosts(t *testing.T, kubeconfig string, n int) *fakeHosts {
	t.Helper()
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	rc.QPS, rc.Burst = 500, 1000
	f := &fakeHosts{t: t, kube: kubernetes.NewForConfigOrDie(rc), nodes: map[string]bool{}, onNode: map[string]map[string]wire.Sandbox{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.addr = ln.Addr().String()
	srv := &http.Server{Handler: http.HandlerFunc(f.serveHost)}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)

	big := func(s string) resource.Quantity { return resource.MustParse(s) }
	// A large host's capacity: 100 sandboxes of 0.1 CPU and 64 MiB each fit,
	// and each one moves kube-scheduler's least-allocated score (with
	// thousands of cores it would not, and it packs one node).
	capacity := corev1.ResourceList{corev1.ResourceCPU: big("64"), corev1.ResourceMemory: big("256Gi"), corev1.ResourcePods: big("250")}
	for i := range n {
		name := fmt.Sprintf("sbx-fake-%03d", i)
		f.nodes[name] = true
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name,
				Labels:      map[string]string{podspec.LabelHost: "true", "kubernetes.io/hostname": name, "type": "kwok"},
				Annotations: map[string]string{podspec.AnnotationAPI: "http://" + f.addr + "/h/" + name}},
			Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: podspec.LabelHost, Value: "true", Effect: corev1.TaintEffectNoSchedule}}},
		}
		if _, err := f.kube.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error { // the node controller adds its taints meanwhile
			made, err := f.kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			now := metav1.Now()
			made.Status = corev1.NodeStatus{Capacity: capacity, Allocatable: capacity,
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: now, LastTransitionTime: now, Reason: "KwokReady"}},
				Addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}}}
			_, err = f.kube.CoreV1().Nodes().UpdateStatus(ctx, made, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	go f.renewLeases(ctx)
	// The node controller lifts its not-ready taint once it has seen the
	// node Ready: until then kube-scheduler places nothing there.
	waitFor(t, 2*time.Minute, "the fake hosts to be schedulable", func() bool {
		nodes, err := f.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "type=kwok"})
		if err != nil || len(nodes.Items) != n {
			return false
		}
		for _, node := range nodes.Items {
			if len(node.Spec.Taints) != 1 || !nodeIsReady(&node) {
				return false
			}
		}
		return true
	})

	pods := make(chan *corev1.Pod, 1024)
	inf := informers.NewSharedInformerFactoryWithOptions(f.kube, 0, informers.WithNamespace("sbx"))
	onPod := func(obj any) {
		if pod, ok := obj.(*corev1.Pod); ok && f.nodes[pod.Spec.NodeName] && (pod.Status.Phase != corev1.PodRunning || pod.DeletionTimestamp != nil) {
			pods <- pod
		}
	}
	inf.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{ //nolint:errcheck
		AddFunc: onPod, UpdateFunc: func(_, obj any) { onPod(obj) },
	})
	inf.Start(ctx.Done())
	for range 8 {
		go func() {
			for {
				select {
				case <-ctx.Done():
					return
				case pod := <-pods:
					f.run(ctx, pod)
				}
			}
		}()
	}
	return f
}

func nodeIsReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// renewLeases keeps the nodes Ready for the node lifecycle controller:
// every node's lease on its own every 5 s, as each host renews its own
// (one loop over a hundred fell behind the grace period under load).
func (f *fakeHosts) renewLeases(ctx context.Context) {
	secs := int32(40)
	for name := range f.nodes {
		go func() {
			leases := f.kube.CoordinationV1().Leases("kube-node-lease")
			for {
				now := metav1.NowMicro()
				l, err := leases.Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					leases.Create(ctx, &coordv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name},
						Spec: coordv1.LeaseSpec{HolderIdentity: &name, LeaseDurationSeconds: &secs, RenewTime: &now}}, metav1.CreateOptions{})
				} else {
					l.Spec.RenewTime = &now
					leases.Update(ctx, l, metav1.UpdateOptions{})
				}
				select {
				case <-ctx.Done():
					return
				case <-time.After(5 * time.Second):
				}
			}
		}()
	}
}

// run is the fake kubelet: the pod's sandbox starts at once, and a pod
// being deleted goes at once.
func (f *fakeHosts) run(ctx context.Context, pod *corev1.Pod) {
	id := podspec.IDForPod(pod.Namespace, pod.Name)
	if pod.DeletionTimestamp != nil {
		f.mu.Lock()
		delete(f.onNode[pod.Spec.NodeName], id)
		f.mu.Unlock()
		zero := int64(0)
		f.kube.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		return
	}
	now := time.Now().UTC()
	f.mu.Lock()
	m := f.onNode[pod.Spec.NodeName]
	if m == nil {
		m = map[string]wire.Sandbox{}
		f.onNode[pod.Spec.NodeName] = m
	}
	m[id] = wire.Sandbox{ID: id, Name: pod.Labels[podspec.LabelName], Team: pod.Labels[podspec.LabelTeam], State: wire.StateStarted,
		Image: "busybox", Labels: map[string]string{}, CreatedAt: now, StartedAt: &now, Class: "container"}
	f.mu.Unlock()
	st := metav1.NewTime(now)
	pod = pod.DeepCopy()
	pod.Status.Phase, pod.Status.StartTime, pod.Status.PodIP = corev1.PodRunning, &st, "10.0.0.1"
	pod.Status.Conditions = []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: st},
		{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: st},
	}
	ready := true
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: podspec.ContainerName, Image: "busybox", Ready: true, Started: &ready,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: st}}}}
	_, err := f.kube.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	if err != nil && ctx.Err() == nil && !apierrors.IsConflict(err) { // a conflict: an older copy, the newer one is queued too
		f.t.Logf("fake kubelet: status of %s: %v", pod.Name, err)
	}
}

// serveHost answers GET /h/<node>/v1/sandboxes/<id>, all the gateway asks
// a host for outside of a sandbox's own calls.
func (f *fakeHosts) serveHost(w http.ResponseWriter, r *http.Request) {
	rest, _ := strings.CutPrefix(r.URL.Path, "/h/")
	node, path, _ := strings.Cut(rest, "/")
	f.mu.Lock()
	defer f.mu.Unlock()
	recs := f.onNode[node]
	switch {
	case r.Method != http.MethodGet:
		http.Error(w, "the fake host only reads", http.StatusMethodNotAllowed)
	case path == "v1/sandboxes":
		f.lists++ // the gateway lists from its caches (the test wants none)
		http.Error(w, "the fake host does not list", http.StatusNotImplemented)
	case strings.HasPrefix(path, "v1/sandboxes/"):
		sb, ok := recs[strings.TrimPrefix(path, "v1/sandboxes/")]
		if !ok {
			http.Error(w, `{"code":"SANDBOX_NOT_FOUND"}`, http.StatusNotFound)
			return
		}
		json.NewEncoder(w).Encode(sb)
	default:
		http.NotFound(w, r)
	}
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive number", name, v)
	}
	return n
}

// procUsage is a process's CPU time (user+system) and resident memory.
func procUsage(t *testing.T, pid int) (cpu time.Duration, rssKiB int) {
	t.Helper()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
	utime, _ := strconv.Atoi(fields[11])
	stime, _ := strconv.Atoi(fields[12])
	cpu = time.Duration(utime+stime) * 10 * time.Millisecond // USER_HZ is 100 on Linux
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			rssKiB, _ = strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
		}
	}
	return cpu, rssKiB
}

// latencies is a sample of durations in milliseconds.
type latencies []float64

func (l latencies) pct(p float64) float64 {
	s := append(latencies(nil), l...)
	sort.Float64s(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

func (l latencies) String() string {
	return fmt.Sprintf("n %d, p50 %.1f ms, p99 %.1f ms", len(l), l.pct(0.50), l.pct(0.99))
}

func timed(into *latencies, mu *sync.Mutex, f func() error) error {
	start := time.Now()
	err := f()
	ms := float64(time.Since(start).Microseconds()) / 1000
	mu.Lock()
	*into = append(*into, ms)
	mu.Unlock()
	return err
}

// TestKubeScale: many hosts and sandboxes through several gateway
// replicas. SBX_SCALE_HOSTS fake hosts (kwok-style, see fakeHosts) join a
// real control plane; SBX_SCALE_SANDBOXES sandboxes of SBX_SCALE_TEAMS
// teams are created through SBX_SCALE_GATEWAYS replicas of sbx gateway
// (round robin, 32 at a time) and placed by kube-scheduler; every one must
// be on a host, in its team's list through every replica, and found by id
// and by name through every replica, and no team sees another's. It logs
// create, get and list latencies and each replica's CPU time and memory
// (BENCHMARKS.md's scale rows: SBX_SCALE_HOSTS=100 SBX_SCALE_SANDBOXES=10000).
func TestKubeScale(t *testing.T) {
	nHosts := envInt(t, "SBX_SCALE_HOSTS", 10)
	nSandboxes := envInt(t, "SBX_SCALE_SANDBOXES", 200)
	nTeams := envInt(t, "SBX_SCALE_TEAMS", 4)
	nGateways := envInt(t, "SBX_SCALE_GATEWAYS", 2)
	c := startCluster(t)
	c.kubectl("apply", "-f", filepath.Join(kubeDeploy, "gateway.yaml"))
	hosts := startFakeHosts(t, c.kubeconfig, nHosts)

	raw := make([]byte, 16)
	rand.Read(raw)
	admin := "sbx_" + hex.EncodeToString(raw)
	adminFile := filepath.Join(c.dir, "admin.token")
	var keysYAML strings.Builder
	keysYAML.WriteString("keys:\n")
	teamKeys := make([]string, nTeams)
	for i := range teamKeys {
		key, entry := gatewayKey(t, fmt.Sprintf("team-%d", i), "sandboxes:read", "sandboxes:write")
		teamKeys[i] = key
		keysYAML.WriteString(entry)
	}
	keysFile := filepath.Join(c.dir, "keys.yaml")
	for file, body := range map[string]string{adminFile: admin + "\n", keysFile: keysYAML.String()} {
		if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	gwKC := c.serviceAccountKubeconfig("sbx-system", "sbx-gateway")
	gws := make([]*gatewayProc, nGateways)
	for i := range gws {
		gws[i] = startGateway(t, c, gwKC, adminFile, admin, freeAddr(t), "--keys-file", keysFile)
	}
	client := func(gw, team int) *sdk.Client { return sdk.NewClient("http://"+gws[gw].addr, teamKeys[team]) }
	type usage struct {
		cpu time.Duration
		rss int
	}
	before := make([]usage, nGateways)
	for i, g := range gws {
		before[i].cpu, before[i].rss = procUsage(t, g.cmd.Process.Pid)
	}

	// Create: 32 at a time, round robin over the replicas and teams.
	ctx := context.Background()
	type made struct {
		id, name string
		team     int
	}
	all := make([]made, nSandboxes)
	var mu sync.Mutex
	var creates, gets, lists latencies
	work := make(chan int)
	errs := make(chan error, nSandboxes)
	var wg sync.WaitGroup
	start := time.Now()
	for range 32 {
		wg.Go(func() {
			for i := range work {
				team, name := i%nTeams, fmt.Sprintf("s-%d", i)
				err := timed(&creates, &mu, func() error {
					sb, err := client(i%nGateways, team).CreateSandbox(ctx, sdk.CreateSandboxRequest{Name: name, CPU: 0.1, MemoryMiB: 64})
					if err == nil && (sb.State != sdk.StateStarted || sb.Team != fmt.Sprintf("team-%d", team)) {
						err = fmt.Errorf("answered %+v", sb)
					}
					if err == nil {
						all[i] = made{sb.ID, name, team}
					}
					return err
				})
				if err != nil {
					errs <- fmt.Errorf("create %s: %w", name, err)
				}
			}
		})
	}
	for i := range nSandboxes {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("%d sandboxes created through %d gateways on %d hosts in %s; create: %s",
		nSandboxes, nGateways, nHosts, time.Since(start).Round(time.Second), creates)

	// Placed: every pod on a fake host, and every host used when there
	// are enough sandboxes for it.
	pods, err := hosts.kube.CoreV1().Pods("sbx").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	perNode := map[string]int{}
	for _, p := range pods.Items {
		if !hosts.nodes[p.Spec.NodeName] {
			t.Fatalf("pod %s is on %q", p.Name, p.Spec.NodeName)
		}
		perNode[p.Spec.NodeName]++
	}
	least, most := nSandboxes, 0
	for _, n := range perNode {
		least, most = min(least, n), max(most, n)
	}
	t.Logf("placement: %d to %d sandboxes on each of %d hosts", least, most, len(perNode))
	if len(pods.Items) != nSandboxes || (nSandboxes >= 5*nHosts && len(perNode) != nHosts) {
		t.Fatalf("%d pods on %d of %d hosts: %v\n%s", len(pods.Items), len(perNode), nHosts, perNode,
			c.kubectl("get", "nodes", "-o", `custom-columns=NAME:.metadata.name,TAINTS:.spec.taints[*].key,READY:.status.conditions[?(@.type=="Ready")].status`))
	}

	// Listed: each team's list through each replica is exactly its own.
	for gw := range gws {
		for team := range nTeams {
			var list []sdk.Sandbox
			err := timed(&lists, &mu, func() (err error) {
				list, err = client(gw, team).ListSandboxes(ctx, sdk.ListOptions{})
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]bool{}
			for _, m := range all {
				if m.team == team {
					want[m.id] = true
				}
			}
			for _, sb := range list {
				if !want[sb.ID] || sb.State != sdk.StateStarted {
					t.Fatalf("team %d's list through gateway %d has %+v", team, gw, sb)
				}
				delete(want, sb.ID)
			}
			if len(want) != 0 {
				t.Fatalf("team %d's list through gateway %d misses %d of its sandboxes", team, gw, len(want))
			}
		}
	}

	hosts.mu.Lock()
	hostLists := hosts.lists
	hosts.mu.Unlock()
	if hostLists != 0 {
		t.Fatalf("the gateways asked the hosts for %d lists", hostLists)
	}

	// Found: every sandbox by id through one replica and by name through
	// another, and not by another team.
	work = make(chan int)
	errs = make(chan error, nSandboxes)
	for range 32 {
		wg.Go(func() {
			for i := range work {
				m := all[i]
				var byID, byName *sdk.Sandbox
				err := timed(&gets, &mu, func() (err error) {
					byID, err = client(i%nGateways, m.team).GetSandbox(ctx, m.id)
					return err
				})
				if err == nil {
					byName, err = client((i+1)%nGateways, m.team).GetSandbox(ctx, m.name)
				}
				if err == nil && (byID.ID != m.id || byName.ID != m.id || byID.State != sdk.StateStarted) {
					err = fmt.Errorf("found %+v and %+v", byID, byName)
				}
				if err == nil && nTeams > 1 {
					if _, err2 := client(i%nGateways, (m.team+1)%nTeams).GetSandbox(ctx, m.id); !sdk.IsNotFound(err2) {
						err = fmt.Errorf("another team's get: %v", err2)
					}
				}
				if err != nil {
					errs <- fmt.Errorf("sandbox %s (%s): %w", m.name, m.id, err)
				}
			}
		})
	}
	for i := range nSandboxes {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i, g := range gws {
		cpu, rss := procUsage(t, g.cmd.Process.Pid)
		t.Logf("gateway %d: CPU %s, RSS %d → %d MiB (%.1f KiB per sandbox)", i, (cpu - before[i].cpu).Round(time.Millisecond),
			before[i].rss/1024, rss/1024, float64(rss-before[i].rss)/float64(nSandboxes))
	}
	t.Logf("get by id: %s; list of a team (%d sandboxes): %s", gets, nSandboxes/nTeams, lists)
}
