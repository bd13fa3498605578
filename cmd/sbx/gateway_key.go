package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/sbxhq/sbx/internal/gateway"
	"github.com/sbxhq/sbx/sdk"
)

// newGatewayKeyCmd makes keys for the gateway's keys file, offline: the
// gateway keeps no key store of its own (docs/kubernetes/teams.md).
func newGatewayKeyCmd() *cobra.Command {
	key := &cobra.Command{Use: "key", Short: "Keys of the cluster gateway (its keys file)", Args: cobra.NoArgs}
	key.AddCommand(newGatewayKeyCreateCmd())
	return key
}

func newGatewayKeyCreateCmd() *cobra.Command {
	var name, team string
	var scopes []string
	var ttl time.Duration
	cmd := &cobra.Command{
		Use:   "create --team TEAM --scope SCOPE [--name NAME] [--ttl DURATION]",
		Short: "Make an API key for the cluster gateway's keys file",
		Long: `Make an API key of a team for the cluster gateway. It prints the key (give it
to its holder: it is not kept anywhere) on standard error, and on standard
output the entry to add under "keys:" in the gateway's keys file (Secret
sbx-gateway-keys), which holds only the hash of its secret. Nothing is
sent anywhere: see docs/kubernetes/teams.md.`,
		Example: `  sbx gateway key create --team team-a --scope sandboxes:read,sandboxes:write,exec --name ci >> entry.yaml`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if ttl < 0 {
				return usagef("--ttl must be 0 (never expires) or more")
			}
			key, entry, err := gateway.NewKey(cmd.Context(), sdk.CreateKeyRequest{Name: name, Team: team, Scopes: scopes, TTLSeconds: int(ttl.Seconds())})
			if err != nil {
				return err
			}
			out, err := yaml.Marshal([]gateway.KeysFileKey{entry})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "key (shown once): %s\n", key)
			fmt.Fprint(cmd.OutOrStdout(), string(out))
			return nil
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "a name for people to tell keys apart")
	cmd.Flags().StringVar(&team, "team", "", "the team the key acts for (required)")
	cmd.Flags().StringSliceVar(&scopes, "scope", nil, "scope the key holds; repeat or comma-separate: "+strings.Join(sdk.Scopes(), ", "))
	cmd.Flags().DurationVar(&ttl, "ttl", 0, "how long the key is valid; 0: until removed from the file")
	return cmd
}
