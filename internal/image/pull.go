package image

import (
	"archive/tar"
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/internal/netfloor"
	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// Pull fetches the linux/amd64 variant of ref from its registry, anonymously,
// and stores it as image imgName (ref itself when imgName is empty). Layers
// already present are not downloaded.
func (m *Manager) Pull(ctx context.Context, ref, imgName string) (*store.Image, error) {
	if imgName == "" {
		imgName = ref
	}
	if err := ValidateName(imgName); err != nil {
		return nil, err
	}
	r, err := name.ParseReference(ref)
	if err != nil {
		return nil, errdefs.Invalid(wire.CodeInvalidImageRef, "invalid image reference %q: %v", ref, err)
	}
	if err := m.disk.Check("pull an image"); err != nil {
		return nil, err
	}
	readErr := func(err error) error { return remoteErr(ctx, ref, err) }
	return m.save(ctx, imgName, "pull:"+ref, func() (*store.Image, error) {
		img, err := remote.Image(r, remote.WithContext(ctx), remote.WithTransport(pullTransport()),
			remote.WithPlatform(v1.Platform{OS: "linux", Architecture: "amd64"}))
		if err != nil {
			return nil, readErr(err)
		}
		work, err := os.MkdirTemp(m.tmpDir, "pull-")
		if err != nil {
			return nil, errdefs.Internal(err, "pulling image")
		}
		defer os.RemoveAll(work)
		return m.fromImage(ctx, img, work, readErr)
	})
}

// pullTransport dials registries (and the blob stores they redirect to)
// only above the operator's network floor: a caller names the registry,
// and the daemon fetches from the host's network.
func pullTransport() http.RoundTripper {
	tr := remote.DefaultTransport.(*http.Transport).Clone()
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: netfloor.Default().Control}
	tr.DialContext = d.DialContext
	return tr
}

// remoteErr classifies an error from talking to a registry.
func remoteErr(ctx context.Context, ref string, err error) error {
	var e *errdefs.Error
	var te *transport.Error
	switch {
	case errors.As(err, &e):
		return err
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.As(err, &te):
		if te.StatusCode == http.StatusNotFound || hasCode(te, transport.ManifestUnknownErrorCode,
			transport.NameUnknownErrorCode, transport.BlobUnknownErrorCode) {
			return errdefs.NotFound(wire.CodeImageNotFound, "image %s not found in its registry", ref)
		}
		if te.StatusCode == http.StatusUnauthorized || te.StatusCode == http.StatusForbidden {
			return errdefs.NotFound(wire.CodeImageNotFound,
				"image %s not found, or the registry wants credentials (sbx pulls anonymously)", ref)
		}
		return errdefs.Unavailable(wire.CodeRegistryUnavailable, "registry error pulling %s: %v", ref, te)
	case strings.Contains(err.Error(), "no child with platform"):
		return errdefs.NotFound(wire.CodeImageNotFound, "image %s has no linux/amd64 variant", ref)
	case errors.Is(err, tar.ErrHeader), errors.Is(err, tar.ErrFieldTooLong):
		return errdefs.Invalid(wire.CodeInvalidImage, "image %s has a corrupt layer: %v", ref, err)
	default:
		return errdefs.Unavailable(wire.CodeRegistryUnavailable, "cannot pull %s: %v", ref, err)
	}
}

func hasCode(te *transport.Error, codes ...transport.ErrorCode) bool {
	for _, d := range te.Errors {
		for _, c := range codes {
			if d.Code == c {
				return true
			}
		}
	}
	return false
}
