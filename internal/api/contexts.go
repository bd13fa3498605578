package api

// Code contexts and stateless runs are rows in routes.go: plain proxy rows,
// and runCode (toolbox.go) for the runs, whose stream ends with "end".
