package main

import (
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"
)

// logFlags are the flags of sbx serve that shape its log.
type logFlags struct {
	format, level string
}

func (f *logFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.format, "log-format", "text", `log format: "text" (key=value) or "json" (one object a line) (env SBX_LOG_FORMAT)`)
	cmd.Flags().StringVar(&f.level, "log-level", "info", `lowest level logged: debug, info, warn or error (env SBX_LOG_LEVEL)`)
}

// apply makes the daemon's log the default slog logger, on stderr.
func (f *logFlags) apply(cmd *cobra.Command) error {
	h, err := logHandler(cmd.ErrOrStderr(), setting(cmd, "log-format", f.format, "SBX_LOG_FORMAT"), setting(cmd, "log-level", f.level, "SBX_LOG_LEVEL"))
	if err != nil {
		return err
	}
	// Also routes the standard log package (used by some libraries) here.
	slog.SetDefault(slog.New(h))
	return nil
}

func logHandler(w io.Writer, format, level string) (slog.Handler, error) {
	levels := map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError}
	lv, ok := levels[strings.ToLower(level)]
	if !ok {
		return nil, usagef("--log-level must be debug, info, warn or error, got %q", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch strings.ToLower(format) {
	case "text":
		return slog.NewTextHandler(w, opts), nil
	case "json":
		return slog.NewJSONHandler(w, opts), nil
	}
	return nil, usagef("--log-format must be text or json, got %q", format)
}
