package sdk

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
)

// Image builds: a Dockerfile (POST /v1/images/build, the context as a tar
// stream) or the same steps as JSON (POST /v1/images/build/steps) become an
// image. Each RUN runs in a build sandbox; each RUN, COPY and ADD adds a
// layer. Progress streams as NDJSON BuildEvents.

// BuildOptions are the query parameters of a Dockerfile build.
type BuildOptions struct {
	Dockerfile     string            // path inside the context; default "Dockerfile"
	BuildArgs      map[string]string // values for ARG
	NoCache        bool              // run every step even when the cache has it
	TimeoutSeconds int               // the whole build; default 1800
}

// BuildImage builds the image name from a Dockerfile in the build context
// (a tar stream) and calls progress with each event (progress may be nil).
// A failed build returns an *APIError with the error event's code.
func (c *Client) BuildImage(ctx context.Context, name string, contextTar io.Reader, opts BuildOptions, progress func(BuildEvent)) (*Image, error) {
	if err := checkName("image", name); err != nil {
		return nil, err
	}
	q := url.Values{"name": {name}}
	if opts.Dockerfile != "" {
		q.Set("dockerfile", opts.Dockerfile)
	}
	for k, v := range opts.BuildArgs {
		q.Add("buildArg", k+"="+v)
	}
	if opts.NoCache {
		q.Set("noCache", "true")
	}
	if opts.TimeoutSeconds > 0 {
		q.Set("timeoutSeconds", strconv.Itoa(opts.TimeoutSeconds))
	}
	resp, err := c.send(ctx, request{method: http.MethodPost, path: "/v1/images/build", query: q, body: contextTar, contentType: "application/x-tar"})
	if err != nil {
		return nil, err
	}
	return readBuild(resp, progress)
}

// BuildImageSteps builds an image from the JSON form of the steps.
func (c *Client) BuildImageSteps(ctx context.Context, req BuildRequest, progress func(BuildEvent)) (*Image, error) {
	resp, err := c.send(ctx, request{method: http.MethodPost, path: "/v1/images/build/steps", in: req})
	if err != nil {
		return nil, err
	}
	return readBuild(resp, progress)
}

func readBuild(resp *http.Response, progress func(BuildEvent)) (*Image, error) {
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var ev BuildEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return nil, fmt.Errorf("decode build progress: %w", err)
		}
		if progress != nil {
			progress(ev)
		}
		switch ev.Type {
		case "done":
			return ev.Image, nil
		case "error":
			e := &APIError{StatusCode: 0, Code: CodeBuildFailed, Message: "the build failed"}
			if ev.Error != nil {
				e.Code, e.Message = ev.Error.Code, ev.Error.Message
			}
			return nil, e
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read build progress: %w", err)
	}
	return nil, fmt.Errorf("the build's progress stream ended without a result")
}
