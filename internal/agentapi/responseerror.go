package agentapi

import (
	"io"
	"net/http"
)

// ResponseError is the error a non-2xx answer to a Forward carries, as the
// typed calls of Client would return it. It reads (a bounded part of) the
// body; the caller still closes it.
func ResponseError(resp *http.Response) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, MaxAnswer))
	return responseError(resp.StatusCode, body)
}
