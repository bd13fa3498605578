// Command gen writes the files made from package wire's source
// (internal/sdkdoc): wire/enums_gen.go and internal/api/openapi_docs_gen.go.
// It runs from any directory of the module (go generate ./internal/api).
package main

import (
	"log"
	"os"
	"path/filepath"

	"github.com/sbxhq/sbx/internal/sdkdoc"
)

func main() {
	dir, err := os.Getwd()
	if err != nil {
		log.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			log.Fatal("gen: no go.mod above the working directory")
		}
		dir = parent
	}
	if err := sdkdoc.Write(dir); err != nil {
		log.Fatal(err)
	}
}
