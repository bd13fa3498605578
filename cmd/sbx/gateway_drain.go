package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	asclient "sigs.k8s.io/agent-sandbox/clients/k8s/clientset/versioned"

	"github.com/sbxhq/sbx/internal/kube/drain"
)

// newGatewayDrainCmd moves every sandbox off one host of a cluster.
func newGatewayDrainCmd() *cobra.Command {
	var kubeconfig, namespace string
	var parallel int
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "drain NODE [--kubeconfig FILE] [--kube-namespace NS]",
		Short: "Move every sandbox off one sbx host of the cluster",
		Long: `Cordon an sbx host's node and move each of its sandboxes to other hosts, through
their Sandbox objects: the pod is evicted, the host stops the sandbox and
archives it to the shared bucket, kube-scheduler places its next pod on another
host, and that host restores it. A running sandbox comes back running with its
files (its processes and memory do not survive the move); one stopped on the
host is suspended and starts on another host when it is next used. One line is
printed as each move starts and ends; the exit status is 1 if any sandbox was
not moved. The node stays cordoned: "kubectl uncordon NODE" lets sandboxes
onto it again.

drain talks to the Kubernetes API with your credentials (--kubeconfig, else
$KUBECONFIG), not to the gateway: it needs to patch the Node, evict pods and
patch Sandboxes in --kube-namespace. See docs/kubernetes/index.md.`,
		Example: `  sbx gateway drain worker-1-sbx --kubeconfig ~/.kube/config
  kubectl uncordon worker-1-sbx   # after the maintenance`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			kube, agents, err := kubeClients(kubeconfig, "sbx-drain")
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			node := args[0]
			fmt.Fprintf(out, "cordoned %s; moving its sandboxes\n", node)
			err = drain.Drain(cmd.Context(), kube, agents, node, drain.Options{Namespace: namespace, Parallel: parallel, Timeout: timeout}, func(r drain.Result) {
				who := r.ID
				if r.Name != "" {
					who += " (" + r.Name + ", team " + r.Team + ")"
				}
				switch {
				case r.Started:
					fmt.Fprintf(out, "moving   %s\n", who)
				case r.Err != nil:
					fmt.Fprintf(out, "FAILED   %s: %v\n", who, r.Err)
				case r.Action == "moved":
					fmt.Fprintf(out, "moved    %s to %s in %s\n", who, r.To, r.Took.Round(100*time.Millisecond))
				default:
					fmt.Fprintf(out, "%-8s %s: archived, starts on another host when used (%s)\n", r.Action, who, r.Took.Round(100*time.Millisecond))
				}
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "drained %s: no sandbox left on it\n", node)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file of the cluster (default $KUBECONFIG)")
	fl.StringVar(&namespace, "kube-namespace", "sbx", "namespace of the Sandbox objects and their pods")
	fl.IntVar(&parallel, "parallel", 4, "sandboxes moved at once")
	fl.DurationVar(&timeout, "timeout", 5*time.Minute, "how long each sandbox may take to leave the host and run again elsewhere")
	return cmd
}

// kubeClients are the Kubernetes clients of kubeconfig (else $KUBECONFIG,
// else the in-cluster service account).
func kubeClients(kubeconfig, userAgent string) (kubernetes.Interface, asclient.Interface, error) {
	if kubeconfig == "" {
		kubeconfig = os.Getenv("KUBECONFIG")
	}
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, nil, fmt.Errorf("kubernetes credentials: %w", err)
	}
	rc.UserAgent = userAgent
	// client-go's default of 5 requests a second capped a gateway replica
	// at 5 creates a second (TestKubeScale); the API server's own priority
	// and fairness is the limit that matters.
	rc.QPS, rc.Burst = 100, 200
	kube, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, nil, err
	}
	agents, err := asclient.NewForConfig(rc)
	if err != nil {
		return nil, nil, err
	}
	return kube, agents, nil
}
