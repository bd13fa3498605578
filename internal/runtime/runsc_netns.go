package runtime

import "github.com/sbxhq/sbx/internal/runtime/runscshim"

// RunscShimCommand is the hidden subcommand, of sbx and of sbx-agent, that
// runs runsc through runscshim.Run (see there why).
const RunscShimCommand = runscshim.Command

// RunscNetnsShim is runscshim.Run.
func RunscNetnsShim(args []string) error { return runscshim.Run(args) }
