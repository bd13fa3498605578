package node

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	goruntime "runtime"
	"strconv"
	"time"

	vknode "github.com/virtual-kubelet/virtual-kubelet/node"
	"github.com/virtual-kubelet/virtual-kubelet/node/nodeutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/sbxhq/sbx/internal/kube/podspec"
	"github.com/sbxhq/sbx/internal/mtls"
)

// Config is how an sbx host joins a cluster (sbx serve --kube-node).
type Config struct {
	Enabled    bool
	Kubeconfig string // "": the in-cluster service account
	NodeName   string // default: the host name
	// AdvertiseURL is this host's sbx API as the gateway reaches it (node
	// annotation sbx.dev/api).
	AdvertiseURL string
	// Address is the node's InternalIP, where kube-apiserver reaches the
	// kubelet API (logs, exec) on Port. Default: AdvertiseURL's host.
	Address string
	// Port defaults to DefaultPort, not the kubelet's 10250: a host on a
	// machine that is also a Kubernetes node shares its kubelet's addresses.
	Port int
	// Namespace is the one namespace whose pods (and the Secrets,
	// ConfigMaps and Services they name) the host serves. Default
	// DefaultNamespace.
	Namespace string
	// ClientCA verifies kube-apiserver's client certificate
	// (--kubelet-client-certificate) on the kubelet API; without it the
	// kubelet API is not served (kubectl logs/exec do not work) rather
	// than served to anyone.
	ClientCA string
	// ClientNames are the names (subject CN or a DNS SAN) kube-apiserver's
	// client certificate must carry: the cluster CA signs users' and other
	// components' certificates too, and none of them may exec into pods
	// here. Default: kubeadm's DefaultClientName.
	ClientNames     []string
	TLSCert, TLSKey string // the kubelet API's certificate; default self-signed
	// EnsureTeam makes a pod's team on this host if it has none: teams and
	// their quotas are the gateway's (docs/kubernetes/teams.md), the host
	// only files the sandbox under it. nil: the team must exist.
	EnsureTeam func(ctx context.Context, team string) error
	// Capacity offered to kube-scheduler; defaults: the host's cores and memory.
	CPU, Memory string
	Pods        int // default 110
	// CheckpointInterval: how often each running sandbox of a Sandbox
	// object is saved to the blob store (recovery.go); 0: never.
	CheckpointInterval time.Duration
	// FenceAfter: how long the node Lease goes unrenewed before this
	// host freezes its sandboxes (watchdog.go). Default DefaultFenceAfter.
	FenceAfter time.Duration
}

// sandboxGVR is agent-sandbox's Sandbox resource.
var sandboxGVR = schema.GroupVersionResource{Group: "agents.x-k8s.io", Version: "v1beta1", Resource: "sandboxes"}

// Run registers the node and serves its pods until ctx ends.
func Run(ctx context.Context, cfg Config, m Sandboxes, addrs Addresses, log *slog.Logger) error {
	if log == nil {
		log = slog.Default()
	}
	if err := cfg.fill(); err != nil {
		return err
	}
	rc, err := restConfig(cfg.Kubeconfig)
	if err != nil {
		return err
	}
	all, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return fmt.Errorf("kube client: %w", err)
	}
	client := namespaced{all, cfg.Namespace}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return fmt.Errorf("kube client: %w", err)
	}
	spec, err := cfg.nodeSpec()
	if err != nil {
		return err
	}
	p := NewProvider(m, sandboxObjects{dyn}, addrs, cfg.NodeName, cfg.Address, log)
	p.ensureTeam = cfg.EnsureTeam
	p.secret = func(ctx context.Context, ns, name string) (*corev1.Secret, error) {
		return client.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
	}
	p.recoveries = sandboxObjects{dyn}
	if cfg.CheckpointInterval > 0 {
		go p.checkpointLoop(ctx, cfg.CheckpointInterval)
	}
	fenceAfter := cfg.FenceAfter
	if fenceAfter <= 0 {
		fenceAfter = DefaultFenceAfter
	}
	go p.watchLease(ctx, leaseRenewed(all.CoordinationV1().Leases("kube-node-lease"), cfg.NodeName), fenceAfter)
	m.SetLifeOwner(p) // owner.go: the Sandbox objects decide the sandboxes' lives
	go reapArchives(ctx, dyn, client, cfg.Namespace, m, log)
	mux := http.NewServeMux()
	opts := []nodeutil.NodeOpt{
		func(c *nodeutil.NodeConfig) error {
			c.Client = client
			c.NodeSpec = *spec
			c.NumWorkers = 4
			c.HTTPListenAddr = net.JoinHostPort(cfg.Address, strconv.Itoa(cfg.Port))
			c.InformerResyncPeriod = time.Minute
			return nil
		},
	}
	if cfg.ClientCA != "" {
		tc, err := cfg.tlsConfig()
		if err != nil {
			return err
		}
		opts = append(opts, nodeutil.AttachProviderRoutes(mux), func(c *nodeutil.NodeConfig) error {
			c.Handler, c.TLSConfig = mux, tc
			return nil
		})
	} else {
		log.Warn("kube: no --kube-node-client-ca: the kubelet API (kubectl logs/exec) is not served")
	}
	np := vknode.NewNaiveNodeProvider()
	n, err := nodeutil.NewNode(cfg.NodeName, func(nodeutil.ProviderConfig) (nodeutil.Provider, vknode.NodeProvider, error) {
		return p, np, nil
	}, opts...)
	if err != nil {
		return fmt.Errorf("kube node: %w", err)
	}
	log.Info("kube: joining the cluster as a node", "node", cfg.NodeName, "api", cfg.AdvertiseURL, "kubelet", cfg.Address+":"+strconv.Itoa(cfg.Port))
	go func() {
		if err := n.WaitReady(ctx, 0); err == nil {
			log.Info("kube: node ready", "node", cfg.NodeName)
			markReady(ctx, all, spec, np, log) // readiness.go
		}
	}()
	return n.Run(ctx)
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		rc, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("no --kubeconfig and not in a cluster: %w", err)
		}
		return rc, nil
	}
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("read kubeconfig %s: %w", kubeconfig, err)
	}
	return rc, nil
}

// fill sets the defaults and checks the rest.
func (c *Config) fill() error {
	if c.NodeName == "" {
		h, err := os.Hostname()
		if err != nil {
			return err
		}
		c.NodeName = h
	}
	if c.AdvertiseURL == "" {
		return errors.New("--kube-advertise-url is needed: the URL of this host's sbx API as the gateway reaches it")
	}
	u, err := url.Parse(c.AdvertiseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--kube-advertise-url %q: want http(s)://HOST:PORT", c.AdvertiseURL)
	}
	if c.Address == "" {
		c.Address = u.Hostname()
	}
	if net.ParseIP(c.Address) == nil {
		return fmt.Errorf("--kube-node-address %q is not an IP address", c.Address)
	}
	if c.Port == 0 {
		c.Port = DefaultPort
	}
	if c.Namespace == "" {
		c.Namespace = DefaultNamespace
	}
	if c.Pods == 0 {
		c.Pods = 110
	}
	if c.CPU == "" {
		c.CPU = strconv.Itoa(goruntime.NumCPU())
	}
	if c.Memory == "" {
		c.Memory = hostMemory()
	}
	for _, q := range []string{c.CPU, c.Memory} {
		if _, err := resource.ParseQuantity(q); err != nil {
			return fmt.Errorf("capacity %q: %w", q, err)
		}
	}
	return nil
}

// nodeSpec is the Node object: labelled and tainted so that only sandbox
// pods (podspec's nodeSelector and toleration) land here, with the host's
// capacity for kube-scheduler and its sbx API URL for the gateway.
func (c *Config) nodeSpec() (*corev1.Node, error) {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(c.CPU),
		corev1.ResourceMemory: resource.MustParse(c.Memory),
		corev1.ResourcePods:   *resource.NewQuantity(int64(c.Pods), resource.DecimalSI),
	}
	cond := func(t corev1.NodeConditionType) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: corev1.ConditionFalse, LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: c.NodeName,
			Labels: map[string]string{
				"type":                   "virtual-kubelet",
				"kubernetes.io/role":     "agent",
				"kubernetes.io/hostname": c.NodeName,
				"kubernetes.io/os":       "linux",
				"kubernetes.io/arch":     goruntime.GOARCH,
				podspec.LabelHost:        "true",
			},
			Annotations: map[string]string{podspec.AnnotationAPI: c.AdvertiseURL},
		},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: podspec.LabelHost, Value: "true", Effect: corev1.TaintEffectNoSchedule}}},
		Status: corev1.NodeStatus{
			Phase:       corev1.NodePending,
			Capacity:    capacity,
			Allocatable: capacity.DeepCopy(),
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: c.Address},
				{Type: corev1.NodeHostName, Address: c.NodeName},
			},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: int32(c.Port)}},
			NodeInfo: corev1.NodeSystemInfo{
				KubeletVersion:  "sbx",
				OperatingSystem: "linux",
				Architecture:    goruntime.GOARCH,
			},
			Conditions: []corev1.NodeCondition{
				cond(corev1.NodeReady), cond(corev1.NodeMemoryPressure), cond(corev1.NodeDiskPressure),
				cond(corev1.NodePIDPressure), cond(corev1.NodeNetworkUnavailable),
			},
		},
	}, nil
}

// DefaultPort is the kubelet API's port on an sbx host: outside the
// 10250-10259 of Kubernetes' own components, so a host runs next to a real
// kubelet on the same machine.
const DefaultPort = 10260

// DefaultClientName is the name kubeadm gives kube-apiserver's
// --kubelet-client-certificate.
const DefaultClientName = "kube-apiserver-kubelet-client"

// tlsConfig serves the kubelet API to kube-apiserver only: a client whose
// certificate ClientCA signed and that names one of ClientNames.
func (c *Config) tlsConfig() (*tls.Config, error) {
	pool, err := mtls.Pool(c.ClientCA, "--kube-node-client-ca")
	if err != nil {
		return nil, err
	}
	var cert tls.Certificate
	if c.TLSCert != "" {
		if cert, err = tls.LoadX509KeyPair(c.TLSCert, c.TLSKey); err != nil {
			return nil, fmt.Errorf("kubelet API certificate: %w", err)
		}
	} else if cert, err = selfSigned(c.NodeName, c.Address); err != nil {
		return nil, err
	}
	names := c.ClientNames
	if len(names) == 0 {
		names = []string{DefaultClientName}
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
	mtls.RequireClient(cfg, pool, names, "kubelet API (--kube-node-client-name)")
	return cfg, nil
}

// selfSigned makes the kubelet API's certificate when none is given
// (kube-apiserver checks it only with --kubelet-certificate-authority).
func selfSigned(name, ip string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().AddDate(1, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{name},
		IPAddresses:  []net.IP{net.ParseIP(ip)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// hostMemory is the host's memory as a quantity (from /proc/meminfo).
func hostMemory() string {
	b, err := os.ReadFile("/proc/meminfo")
	if err == nil {
		var kb int64
		if _, err := fmt.Sscanf(string(b), "MemTotal: %d kB", &kb); err == nil && kb > 0 {
			return strconv.FormatInt(kb, 10) + "Ki"
		}
	}
	return "1Gi"
}
