package main

import (
	"strconv"

	"github.com/sbxhq/sbx/internal/daemon"
	"github.com/spf13/cobra"
)

// lifecycleFlags are the flags of sbx serve for archives and webhooks.
type lifecycleFlags struct {
	blobDir  string
	webhooks []string
	secret   string
	touch    bool
}

func (f *lifecycleFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.blobDir, "blob-dir", "", "directory for archives of stopped sandboxes (env SBX_BLOB_DIR, default <data-dir>/blobs)")
	fl.StringArrayVar(&f.webhooks, "webhook", nil, "URL that receives every sandbox event as a signed JSON POST (repeatable)")
	fl.BoolVar(&f.touch, "create-on-touch", false, "a toolbox call (exec, files, processes, …) on an unknown sandbox NAME creates it with the defaults; scope names taken from user input (env SBX_CREATE_ON_TOUCH)")
	fl.StringVar(&f.secret, "webhook-secret", "", "HMAC-SHA256 key that signs webhook requests (env SBX_WEBHOOK_SECRET; prefer the environment, flags show in ps)")
}

func (f *lifecycleFlags) apply(cmd *cobra.Command, cfg *daemon.Config) {
	cfg.BlobDir = setting(cmd, "blob-dir", f.blobDir, "SBX_BLOB_DIR")
	cfg.Webhooks = f.webhooks
	cfg.CreateOnTouch, _ = strconv.ParseBool(setting(cmd, "create-on-touch", strconv.FormatBool(f.touch), "SBX_CREATE_ON_TOUCH"))
	cfg.WebhookSecret = setting(cmd, "webhook-secret", f.secret, "SBX_WEBHOOK_SECRET")
}
