package wire

// RequestIDHeader is the header in which the daemon names each request
// (and takes the caller's id, when it is well formed).
const RequestIDHeader = "X-Request-Id"
