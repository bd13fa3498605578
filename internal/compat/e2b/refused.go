package e2b

import (
	"strings"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// refusal is a part of E2B's API this layer does not implement: requests
// to it are a 400 naming the SDK methods that send them, so that a caller
// learns at once what sbx does not do. A 404 would be read by several SDK
// methods as an answer ("no such template"), so the status is 400.
type refusal struct {
	method  string // "" for any
	prefix  string // path below Prefix (without v2/ or v3/), matched by segments
	methods string // what the SDK calls it
	why     string
}

var refusals = []refusal{
	{"", "/templates/tags", "Template.assignTags and Template.removeTags", "template tags are not implemented; sbx templates are the images set by sbx serve --e2b-template"},
	{"", "/templates/{id}/tags", "Template.getTags", "template tags are not implemented"},
	{"", "/templates/{id}/builds", "Template.build, Template.buildInBackground and Template.getBuildStatus", "template builds are not implemented; build an sbx image (sbx image build) and map it with sbx serve --e2b-template name=image"},
	{"", "/templates/{id}/files", "Template.build (file uploads)", "template builds are not implemented; build an sbx image (sbx image build)"},
	{"POST", "/templates", "Template.build and Template.buildInBackground", "template builds are not implemented; build an sbx image (sbx image build) and map it with sbx serve --e2b-template name=image"},
	{"", "/sandboxes/{id}/logs", "Sandbox logs", "use sbx logs"},
}

// refused is the error for a request (method, path) no route serves, naming the
// SDK methods that send it; nil if it is not a known part of E2B's API.
func refused(method, path string) error {
	got := strings.Split(strings.Trim(path, "/"), "/")
	for _, rf := range refusals {
		want := strings.Split(strings.Trim(rf.prefix, "/"), "/")
		if len(got) < len(want) || (rf.method != "" && rf.method != method) {
			continue
		}
		ok := true
		for i := range want {
			if want[i] != "{id}" && want[i] != got[i] {
				ok = false
				break
			}
		}
		if ok {
			return errdefs.Invalid(wire.CodeInvalidParameter, "%s: not supported by sbx's E2B layer (%s)", rf.methods, rf.why)
		}
	}
	return nil
}
