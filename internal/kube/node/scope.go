package node

import (
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// DefaultNamespace is where the Sandbox objects and their pods live
// (deploy/kubernetes/namespaces.yaml; the gateway's --kube-namespace).
const DefaultNamespace = "sbx"

// namespaced is a clientset whose pods, Secrets, ConfigMaps and Services
// are those of one namespace. virtual-kubelet's nodeutil watches them in
// all namespaces (its informers take no namespace); through this client a
// host reads and writes only the sandbox namespace, so its RBAC
// (deploy/kubernetes/host-rbac.yaml) is a Role there, not a ClusterRole
// over every Secret in the cluster. Nodes, leases and events pass through.
type namespaced struct {
	kubernetes.Interface
	ns string
}

func (c namespaced) CoreV1() corev1client.CoreV1Interface {
	return namespacedCore{c.Interface.CoreV1(), c.ns}
}

type namespacedCore struct {
	corev1client.CoreV1Interface
	ns string
}

func (c namespacedCore) Pods(string) corev1client.PodInterface { return c.CoreV1Interface.Pods(c.ns) }
func (c namespacedCore) Secrets(string) corev1client.SecretInterface {
	return c.CoreV1Interface.Secrets(c.ns)
}
func (c namespacedCore) ConfigMaps(string) corev1client.ConfigMapInterface {
	return c.CoreV1Interface.ConfigMaps(c.ns)
}
func (c namespacedCore) Services(string) corev1client.ServiceInterface {
	return c.CoreV1Interface.Services(c.ns)
}
