// Package wire is what the sbx API sends and receives: the request and
// response bodies, the sandbox States, the error Codes, and the small pure
// helpers they need. The daemon (internal/...) and the Go client (package
// sdk, which re-exports every name of wire) both use it, so the server does
// not depend on the client.
//
// Wire imports nothing but encoding and formatting packages of the standard
// library. The doc comments of its types and fields are the descriptions of
// the OpenAPI document (internal/sdkdoc, internal/api). Its declarations are
// moved here from sdk/ by internal/tools/wiresplit.
package wire
