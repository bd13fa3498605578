package agent

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"

	format "github.com/go-git/go-git/v5/plumbing/format/config"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// gitConfig reads or sets one option of the global (~/.gitconfig, which
// the git command and go-git both read) or a repository's configuration.
func (s *server) gitConfig(_ context.Context, req wire.GitConfigRequest) (wire.GitConfigValue, error) {
	section, sub, key, err := splitGitKey(req.Key)
	if err != nil {
		return wire.GitConfigValue{}, err
	}
	var file string
	switch req.Scope {
	case "", "global":
		home, err := os.UserHomeDir()
		if err != nil {
			return wire.GitConfigValue{}, errdefs.Invalid(wire.CodeInvalidParameter, "the global git config needs a home directory: %v", err)
		}
		file = filepath.Join(home, ".gitconfig")
	case "local":
		_, dir, err := s.openRepo(req.Path)
		if err != nil {
			return wire.GitConfigValue{}, err
		}
		file = filepath.Join(dir, ".git", "config")
		if _, err := os.Stat(file); err != nil { // a bare repository
			file = filepath.Join(dir, "config")
		}
	default:
		return wire.GitConfigValue{}, errdefs.Invalid(wire.CodeInvalidParameter, "git config scope %q is not supported: global or local", req.Scope)
	}
	cfg := format.New()
	raw, err := os.ReadFile(file)
	if err != nil && !os.IsNotExist(err) {
		return wire.GitConfigValue{}, errdefs.Internal(err, "read %s", file)
	}
	if err := format.NewDecoder(bytes.NewReader(raw)).Decode(cfg); err != nil {
		return wire.GitConfigValue{}, errdefs.Invalid(wire.CodeInvalidParameter, "%s is not a git config file: %v", file, err)
	}
	sec := cfg.Section(section)
	if req.Value == nil {
		opts := sec.Options
		if sub != "" {
			if !sec.HasSubsection(sub) {
				return wire.GitConfigValue{}, nil
			}
			opts = sec.Subsection(sub).Options
		}
		if !opts.Has(key) {
			return wire.GitConfigValue{}, nil
		}
		v := opts.Get(key)
		return wire.GitConfigValue{Value: &v}, nil
	}
	if sub != "" {
		sec.Subsection(sub).SetOption(key, *req.Value)
	} else {
		sec.SetOption(key, *req.Value)
	}
	var out bytes.Buffer
	if err := format.NewEncoder(&out).Encode(cfg); err != nil {
		return wire.GitConfigValue{}, errdefs.Internal(err, "encode %s", file)
	}
	if err := os.WriteFile(file, out.Bytes(), 0o644); err != nil {
		return wire.GitConfigValue{}, errdefs.Internal(err, "write %s", file)
	}
	return wire.GitConfigValue{Value: req.Value}, nil
}

// splitGitKey splits "section.key" or "section.sub.section.key" as git does.
func splitGitKey(k string) (section, sub, key string, err error) {
	first, last := strings.Index(k, "."), strings.LastIndex(k, ".")
	if first <= 0 || last == len(k)-1 {
		return "", "", "", errdefs.Invalid(wire.CodeInvalidParameter, "git config key %q is not section.key", k)
	}
	section, key = k[:first], k[last+1:]
	if last > first {
		sub = k[first+1 : last]
	}
	return section, sub, key, nil
}
