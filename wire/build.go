package wire

// BuildRequest is the JSON form of a build: the body of
// POST /v1/images/build/steps.
type BuildRequest struct {
	Name  string      `json:"name"`  // the image to make (replaced if it exists)
	From  string      `json:"from"`  // an image sbx has, else a registry reference it pulls
	Steps []BuildStep `json:"steps"` // in order
	// Files are the build context COPY takes from: path → content.
	Files map[string][]byte `json:"files,omitempty"`
	// Values for ARG, by name.
	BuildArgs map[string]string `json:"buildArgs,omitempty"`
	// Run every step even when the cache has its result. Default: false.
	NoCache bool `json:"noCache,omitempty"`
	// The whole build's limit. Default: 1800.
	TimeoutSeconds int `json:"timeoutSeconds,omitempty"`
}

// BuildStep is one step of the JSON form: exactly one field is set. Values
// are taken literally (no $VARIABLE expansion).
type BuildStep struct {
	Run  string     `json:"run,omitempty"`  // a shell command (sh -c)
	Copy *BuildCopy `json:"copy,omitempty"` // files of the context
	// ENV: variables set for later steps and the image.
	Env map[string]string `json:"env,omitempty"`
	// WORKDIR: the directory later steps run in and the image's working directory.
	Workdir string `json:"workdir,omitempty"`
	// USER: the account later RUN steps run as, recorded in the image.
	User string `json:"user,omitempty"`
	// ENTRYPOINT: the image's main process.
	Entrypoint []string `json:"entrypoint,omitempty"`
	// CMD: the entrypoint's arguments, or the main process without one.
	Cmd []string `json:"cmd,omitempty"`
	// LABEL: labels of the image.
	Labels map[string]string `json:"labels,omitempty"`
}

// BuildCopy copies context files into the image.
type BuildCopy struct {
	Src  []string `json:"src"`  // paths in the context; globs allowed
	Dest string   `json:"dest"` // absolute, or relative to the workdir; a trailing / means a directory
}

// BuildEvent is one line of a build's progress. Type is:
//   - "pull": the FROM image (Instruction) is being pulled from its
//     registry, or was (Data says which), as sbx had no image of that name;
//   - "step": step Step of Total begins (Instruction, Line); Cached says the
//     cache had its result and nothing runs;
//   - "output": a chunk of a RUN step's output (Stream "stdout"/"stderr", Data);
//   - "layer": the step made Layer;
//   - "done": the image is stored (Image) — the last event of a success;
//   - "error": the build failed (Error; for a failed RUN, ExitCode and the
//     step's last Output) — the last event of a failure. No image is stored;
//   - "heartbeat": nothing happened for 15 s.
type BuildEvent struct {
	// "pull", "step", "output", "layer", "done", "error" or "heartbeat" (see the schema's
	// description).
	Type string `json:"type"`
	// The step's number, from 1 ("step").
	Step int `json:"step,omitempty"`
	// How many steps the build has ("step").
	Total int `json:"total,omitempty"`
	// The Dockerfile line of the step ("step").
	Line int `json:"line,omitempty"`
	// The step's instruction as written ("step"), or the FROM image ("pull").
	Instruction string `json:"instruction,omitempty"`
	// The cache had the step's result and nothing runs ("step").
	Cached bool `json:"cached,omitempty"`
	// "stdout" or "stderr" ("output").
	Stream string `json:"stream,omitempty"`
	// A chunk of a RUN step's output ("output"), or what the pull did ("pull").
	Data string `json:"data,omitempty"`
	// The layer the step made ("layer").
	Layer string `json:"layer,omitempty"`
	// The stored image ("done").
	Image *Image `json:"image,omitempty"`
	// The failed RUN step's exit status ("error").
	ExitCode int `json:"exitCode,omitempty"`
	// The failed RUN step's last output ("error").
	Output string `json:"output,omitempty"`
	// Why the build failed ("error").
	Error *ErrorBody `json:"error,omitempty"`
}
