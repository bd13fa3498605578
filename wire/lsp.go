package wire

// LSPServerRequest names a language server: one runs per language and
// project directory.
type LSPServerRequest struct {
	// "python", "typescript" or "javascript".
	Language string `json:"language"`
	// The project's directory (the server's workspace root); relative paths
	// start at the workdir.
	Project string `json:"project"`
}

// LSPServer describes a running language server.
type LSPServer struct {
	// The language it serves.
	Language string `json:"language"`
	// The project directory, absolute.
	Project string `json:"project"`
	// The program that runs, e.g. "pylsp".
	Program string `json:"program"`
	// Its process id inside the sandbox.
	Pid int `json:"pid"`
	// How many documents are open on it (did-open without did-close).
	OpenDocuments int `json:"openDocuments"`
}

// LSPDocumentRequest is the body of did-open, did-close and
// document-symbols: a file of the project.
type LSPDocumentRequest struct {
	// "python", "typescript" or "javascript".
	Language string `json:"language"`
	// The project directory the server was started for.
	Project string `json:"project"`
	// The file, inside the project; relative paths start at the workdir.
	Path string `json:"path"`
}

// LSPWorkspaceSymbolsRequest is the body of …/lsp/workspace-symbols.
type LSPWorkspaceSymbolsRequest struct {
	// "python", "typescript" or "javascript".
	Language string `json:"language"`
	// The project directory the server was started for.
	Project string `json:"project"`
	// Symbols whose name contains this (case-insensitive); "" matches every one.
	Query string `json:"query"`
}

// LSPCompletionRequest is the body of …/lsp/completions.
type LSPCompletionRequest struct {
	// "python", "typescript" or "javascript".
	Language string `json:"language"`
	// The project directory the server was started for.
	Project string `json:"project"`
	// The file, inside the project; relative paths start at the workdir.
	Path string `json:"path"`
	// The position to complete at.
	Position LSPPosition `json:"position"`
	// The character just typed that asks for completions (such as "."); ""
	// when they were asked for explicitly.
	TriggerCharacter string `json:"triggerCharacter,omitempty"`
}

// LSPPosition is a place in a file.
type LSPPosition struct {
	// The line, from 0.
	Line int `json:"line"`
	// The character of the line (UTF-16 code units, as LSP counts), from 0.
	Character int `json:"character"`
}

// LSPRange is a span of a file.
type LSPRange struct {
	// Where it begins.
	Start LSPPosition `json:"start"`
	// Where it ends (exclusive).
	End LSPPosition `json:"end"`
}

// LSPSymbol is a symbol (class, function, variable…) a server found.
type LSPSymbol struct {
	// Its name.
	Name string `json:"name"`
	// LSP's SymbolKind: 5 class, 6 method, 12 function, 13 variable, …
	Kind int `json:"kind"`
	// The file it is in, as a file:// URI.
	URI string `json:"uri"`
	// Where it is in the file.
	Range LSPRange `json:"range"`
	// The symbol it is declared in, if the server said.
	Container string `json:"container,omitempty"`
}

// LSPCompletionList is the answer of …/lsp/completions.
type LSPCompletionList struct {
	// The server (or the agent's bound of 1000 items) left items out: typing
	// more narrows the list.
	Incomplete bool `json:"incomplete"`
	// The completions, in the server's order.
	Items []LSPCompletionItem `json:"items"`
}

// LSPCompletionItem is one completion.
type LSPCompletionItem struct {
	// What the list shows, and by default what is inserted.
	Label string `json:"label"`
	// LSP's CompletionItemKind: 2 method, 3 function, 6 variable, 7 class, 9 module, …
	Kind int `json:"kind,omitempty"`
	// More about it, such as a signature.
	Detail string `json:"detail,omitempty"`
	// Its documentation (markdown or plain text).
	Documentation string `json:"documentation,omitempty"`
	// The text inserted, when not the label.
	InsertText string `json:"insertText,omitempty"`
	// The key the list sorts by, when not the label.
	SortText string `json:"sortText,omitempty"`
	// The text typed input is matched against, when not the label.
	FilterText string `json:"filterText,omitempty"`
}
