package daytona

import (
	"net/http"

	"github.com/sbxhq/sbx/wire"
)

// unsupportedRoutes are the Daytona routes behind SDK methods sbx does not
// serve, each with the method a user called: the refusal names it and
// says what to use instead, rather than a bare unknown route.
// (docs/compat/daytona.md lists every method.)
var unsupportedRoutes = []struct{ pattern, method, why string }{
	{apiPrefix + "/config", "sandbox.getMetrics", "sbx keeps no metrics history; use getMetricsLatest, or sbx's Prometheus /metrics"},
	{apiPrefix + "/sandbox/{id}/telemetry/metrics", "sandbox.getMetrics", "sbx keeps no metrics history; use getMetricsLatest, or sbx's Prometheus /metrics"},
	{apiPrefix + "/sandbox/{id}/recover", "sandbox.recover", "start the sandbox again (sandbox.start)"},
	{apiPrefix + "/sandbox/{id}/secrets", "sandbox.updateSecrets", "use sbx secrets (sbx secret, HTTP egress injection)"},
	{apiPrefix + "/sandbox/{id}/signing-key", "sandbox.downloadUrl and uploadUrl", "use the toolbox file routes with the API key"},
	{apiPrefix + "/sandbox/{id}/signing-key/rotate", "sandbox.rotateSigningKey", "signed file URLs are not served"},
	{apiPrefix + "/sandbox/{id}/ports/{port}/signed-preview-url/{token}/expire", "sandbox.expireSignedPreviewUrl", "signed preview URLs end at their expiry"},
	{apiPrefix + "/secret", "secret.*", "use sbx secrets (sbx secret)"},
	{apiPrefix + "/secret/{sid}", "secret.*", "use sbx secrets (sbx secret)"},
	{apiPrefix + "/secret/paginated", "secret.list", "use sbx secrets (sbx secret)"},
	{apiPrefix + "/object-storage/push-access", "Image.addLocalFile, addLocalDir, pipInstallFromRequirements and pipInstallFromPyproject",
		"sbx has no object storage for build context; put the files in with runCommands, or build with sbx image build"},
	{toolboxPrefix + "/{id}/lsp/{op}", "lspServer.*", "the images carry no language servers"},
	{toolboxPrefix + "/{id}/git/credentials", "git.dangerouslyAuthenticate", "pass username and password to clone, push and pull"},
}

func unsupportedMethod(method, why string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		return invalid(wire.CodeFeatureUnsupported, "%s is not supported by sbx's Daytona compatibility layer: %s", method, why)
	}
}
