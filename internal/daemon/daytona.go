package daemon

import (
	"github.com/sbxhq/sbx/internal/api"
	"github.com/sbxhq/sbx/internal/auth"
	"github.com/sbxhq/sbx/internal/authz"
	"github.com/sbxhq/sbx/internal/compat/daytona"
	"github.com/sbxhq/sbx/internal/network"
	"github.com/sbxhq/sbx/internal/sandbox"
	"github.com/sbxhq/sbx/internal/ui"
)

// mountDaytona serves Daytona's API at /daytona/ (package compat/daytona)
// unless cfg.NoDaytona: Daytona's SDKs work against sbx with apiUrl
// {sbx}/daytona/api and an sbx API key.
func mountDaytona(cfg Config, handler *api.Server, mgr *sandbox.Manager, images daytona.Images, previews *network.Previews, gate *authz.Gate, hist *ui.History, keys auth.KeyLookup, secret string) {
	if cfg.NoDaytona {
		return
	}
	handler.Mount(daytona.Prefix, daytona.New(daytona.Config{Sandboxes: mgr, Images: images, Gate: gate, Previews: previews, API: handler, SSH: handler.SSHAccess, Metrics: hist,
		Keys: keys, SigningSecret: []byte(secret)}))
}
