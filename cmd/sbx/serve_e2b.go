package main

import (
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sbxhq/sbx/internal/daemon"
)

// e2bFlags are the flags of sbx serve's E2B-compatible API (/e2b/).
type e2bFlags struct {
	templates []string
}

func (f *e2bFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&f.templates, "e2b-template", nil,
		"map an E2B template name to an sbx image, alias=image (or alias=snapshot:NAME); repeat for several. Built in: base and code-interpreter-v1 → python (env SBX_E2B_TEMPLATES, comma-separated)")
}

func (f *e2bFlags) apply(cmd *cobra.Command, cfg *daemon.Config) error {
	list := f.templates
	if v := os.Getenv("SBX_E2B_TEMPLATES"); v != "" && !cmd.Flags().Changed("e2b-template") {
		list = strings.Split(v, ",")
	}
	for _, t := range list {
		alias, img, ok := strings.Cut(strings.TrimSpace(t), "=")
		if !ok || alias == "" || img == "" {
			return usagef("--e2b-template must look like alias=image, got %q", t)
		}
		if cfg.E2BTemplates == nil {
			cfg.E2BTemplates = map[string]string{}
		}
		cfg.E2BTemplates[alias] = img
	}
	return nil
}
