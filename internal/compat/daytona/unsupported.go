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
	{apiPrefix + "/sandbox/{id}/secrets", "sandbox.updateSecrets", "sbx injects a secret into requests to its hosts with an HTTP egress inject rule (PUT /v1/sandboxes/{id}/egress), not as an environment placeholder"},
	{apiPrefix + "/object-storage/push-access", "Image.addLocalFile, addLocalDir, pipInstallFromRequirements and pipInstallFromPyproject",
		"sbx has no object storage for build context; put the files in with runCommands, or build with sbx image build"},
}

func unsupportedMethod(method, why string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		return invalid(wire.CodeFeatureUnsupported, "%s is not supported by sbx's Daytona compatibility layer: %s", method, why)
	}
}
