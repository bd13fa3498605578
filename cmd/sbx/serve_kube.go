package main

import (
	"net"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sbxhq/sbx/internal/daemon"
	kubenode "github.com/sbxhq/sbx/internal/kube/node"
)

// kubeNodeFlags are the flags of sbx serve that make this host a
// Kubernetes node (package internal/kube/node; docs/kubernetes/index.md).
type kubeNodeFlags struct {
	enabled                      bool
	kubeconfig, name, advertise  string
	address, clientCA, cert, key string
	cpu, memory, namespace       string
	subnetPool                   string
	port, pods                   int
	clientNames                  []string
	checkpoint                   time.Duration
}

func (f *kubeNodeFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.BoolVar(&f.enabled, "kube-node", false, "join a Kubernetes cluster as a node (virtual-kubelet): pods kube-scheduler binds here run as sandboxes; needs --blob-url so stopped sandboxes can move between hosts (env SBX_KUBE_NODE=true)")
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig of the cluster (env SBX_KUBECONFIG; default: the pod's service account)")
	fl.StringVar(&f.name, "kube-node-name", "", "name of this host's Node object (env SBX_KUBE_NODE_NAME; default: the host name)")
	fl.StringVar(&f.advertise, "kube-advertise-url", "", "URL of this host's sbx API as the gateway reaches it, e.g. http://10.0.0.5:7423: the node's annotation sbx.dev/api (env SBX_KUBE_ADVERTISE_URL; default: --listen when it names one address)")
	fl.StringVar(&f.address, "kube-node-address", "", "the node's InternalIP, where kube-apiserver reaches the kubelet API for logs and exec (env SBX_KUBE_NODE_ADDRESS; default: --kube-advertise-url's host)")
	fl.IntVar(&f.port, "kube-node-port", kubenode.DefaultPort, "port of the kubelet API (kubectl logs/exec); not the kubelet's 10250, so a host runs next to a real kubelet")
	fl.StringVar(&f.namespace, "kube-namespace", kubenode.DefaultNamespace, "the one namespace whose sandbox pods this host runs (and whose Secrets, ConfigMaps and Services it reads): the gateway's --kube-namespace")
	fl.StringVar(&f.clientCA, "kube-node-client-ca", "", "CA that signed kube-apiserver's --kubelet-client-certificate; without it kubectl logs/exec are not served (env SBX_KUBE_NODE_CLIENT_CA)")
	fl.StringArrayVar(&f.clientNames, "kube-node-client-name", nil, "name (subject CN or DNS SAN) kube-apiserver's --kubelet-client-certificate carries; any other certificate the CA signed is refused; repeat for several (env SBX_KUBE_NODE_CLIENT_NAMES, comma-separated; default: kube-apiserver-kubelet-client)")
	fl.StringVar(&f.cert, "kube-node-tls-cert", "", "certificate of the kubelet API (default: self-signed)")
	fl.StringVar(&f.key, "kube-node-tls-key", "", "key of --kube-node-tls-cert")
	fl.StringVar(&f.cpu, "kube-node-cpu", "", "CPU capacity offered to kube-scheduler, e.g. 16 or 15500m (default: the host's cores)")
	fl.StringVar(&f.memory, "kube-node-memory", "", "memory capacity offered to kube-scheduler, e.g. 60Gi (default: the host's memory)")
	fl.IntVar(&f.pods, "kube-node-pods", 110, "most sandboxes (pods) kube-scheduler places here")
	fl.DurationVar(&f.checkpoint, "kube-checkpoint-interval", kubenode.DefaultCheckpointInterval, "how often each running sandbox's files are saved to the bucket when they changed, so a sandbox whose host is lost comes back from that save; 0 turns checkpoints off (docs/kubernetes/lifecycle.md)")
	fl.StringVar(&f.subnetPool, "kube-node-subnet-pool", "", "IPv4 CIDR shared by all hosts, e.g. 10.64.0.0/10: this host's sandbox subnet is the /24 of it chosen by the low bits of its node address, so pod IPs differ between hosts; instead of --subnet (env SBX_KUBE_NODE_SUBNET_POOL)")
}

func (f *kubeNodeFlags) apply(cmd *cobra.Command, cfg *daemon.Config) error {
	on := f.enabled
	if !cmd.Flags().Changed("kube-node") {
		on = envTrue("SBX_KUBE_NODE")
	}
	if !on {
		return nil
	}
	if cfg.BlobS3.URL == "" {
		return usagef("--kube-node needs --blob-url: a stopped sandbox is archived to the shared bucket so any host can start it again")
	}
	c := &cfg.KubeNode
	c.Enabled = true
	c.Kubeconfig = setting(cmd, "kubeconfig", f.kubeconfig, "SBX_KUBECONFIG")
	c.NodeName = setting(cmd, "kube-node-name", f.name, "SBX_KUBE_NODE_NAME")
	c.AdvertiseURL = setting(cmd, "kube-advertise-url", f.advertise, "SBX_KUBE_ADVERTISE_URL")
	c.Address = setting(cmd, "kube-node-address", f.address, "SBX_KUBE_NODE_ADDRESS")
	c.ClientCA = setting(cmd, "kube-node-client-ca", f.clientCA, "SBX_KUBE_NODE_CLIENT_CA")
	c.ClientNames = f.clientNames
	if v := os.Getenv("SBX_KUBE_NODE_CLIENT_NAMES"); v != "" && !cmd.Flags().Changed("kube-node-client-name") {
		c.ClientNames = strings.Split(v, ",")
	}
	c.Port, c.Pods, c.Namespace = f.port, f.pods, f.namespace
	c.TLSCert, c.TLSKey = f.cert, f.key
	c.CPU, c.Memory = f.cpu, f.memory
	if f.checkpoint < 0 {
		return usagef("--kube-checkpoint-interval %s: want a duration of 0 (off) or more", f.checkpoint)
	}
	c.CheckpointInterval = f.checkpoint
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return usagef("--kube-node-tls-cert and --kube-node-tls-key go together")
	}
	if c.AdvertiseURL == "" {
		c.AdvertiseURL = listenURL(cfg)
	}
	if c.AdvertiseURL == "" {
		return usagef("--kube-node needs --kube-advertise-url: the URL of this host's sbx API as the gateway reaches it (--listen %s names no one address)", cfg.Listen)
	}
	if pool := setting(cmd, "kube-node-subnet-pool", f.subnetPool, "SBX_KUBE_NODE_SUBNET_POOL"); pool != "" {
		if cmd.Flags().Changed("subnet") || os.Getenv("SBX_SUBNET") != "" {
			return usagef("--kube-node-subnet-pool and --subnet both name the sandbox subnet: give one")
		}
		addr := c.Address
		if u, err := url.Parse(c.AdvertiseURL); addr == "" && err == nil {
			addr = u.Hostname()
		}
		subnet, err := kubenode.SubnetFor(pool, addr)
		if err != nil {
			return usagef("--kube-node-subnet-pool: %v", err)
		}
		cfg.Subnet = subnet
	}
	return nil
}

// listenURL is the API's URL when --listen names one address, else "".
func listenURL(cfg *daemon.Config) string {
	host, _, err := net.SplitHostPort(cfg.Listen)
	if ip, perr := netip.ParseAddr(host); err != nil || perr != nil || ip.IsUnspecified() {
		return ""
	}
	if cfg.TLSCert != "" {
		return "https://" + cfg.Listen
	}
	return "http://" + cfg.Listen
}

func envTrue(name string) bool {
	switch os.Getenv(name) {
	case "1", "true", "TRUE", "True", "yes":
		return true
	}
	return false
}
