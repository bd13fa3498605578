// Command wiresplit keeps the wire types apart from the Go client. Package
// wire (wire/) holds what the API sends and receives: request and response
// types, State, the error Codes, and the pure helpers they need. Package sdk
// (sdk/) is the Go client, and re-exports every wire name through the
// generated sdk/wire_aliases.go, so its users see no change.
//
// It is a program, not a one-off edit, because new wire types keep being
// written into sdk/ and new code inside the module keeps naming them sdk.X.
// Run from anywhere in the module:
//
//	go run ./internal/tools/wiresplit -rewrite internal cmd/sbx-agent
//
// It (1) moves every declaration of sdk/F.go that is not the client's into
// wire/F.go, doc comments included (a name declared in both, as after a
// merge, is taken from sdk/: that is the newer text); (2) writes
// sdk/wire_aliases.go; (3) with -rewrite, makes the Go files under the
// given directories name wire.X instead of sdk.X for every name of wire,
// fixing their imports. Running it twice changes nothing.
//
// What stays in sdk (the client) is decided from the code, not a list of
// types: a declaration stays if it imports anything but the packages in
// wireImports, if it is a variable, if it is named in clientNames or ends in
// "Option"/"Options" (the client's call parameters), if it refers to
// something that stays, or if something that stays refers to it while it is
// unexported (package sdk could not reach it in wire). A type moves with all
// its methods, or stays with them.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
)

const (
	modulePath = "github.com/sbxhq/sbx"
	sdkImport  = modulePath + "/sdk"
	wireImport = modulePath + "/wire"
	aliasFile  = "wire_aliases.go"
)

func main() {
	rewrite := flag.Bool("rewrite", false, "also rewrite sdk.X to wire.X in the Go files under the directories given as arguments (relative to the module root)")
	why := flag.Bool("why", false, "only print, for each declaration of sdk, whether it moves or why it stays")
	flag.Parse()
	if !*rewrite && flag.NArg() > 0 {
		log.Fatal("wiresplit: directories are only for -rewrite")
	}
	root, err := moduleRoot()
	if err != nil {
		log.Fatal(err)
	}
	sdkDir, wireDir := filepath.Join(root, "sdk"), filepath.Join(root, "wire")
	moved, err := split(sdkDir, wireDir, *why)
	if err != nil || *why {
		if err != nil {
			log.Fatal(err)
		}
		return
	}
	for _, m := range moved {
		fmt.Println("moved", m)
	}
	if err := writeAliases(sdkDir, wireDir); err != nil {
		log.Fatal(err)
	}
	if !*rewrite {
		return
	}
	names, err := exportedNames(wireDir)
	if err != nil {
		log.Fatal(err)
	}
	for _, d := range flag.Args() {
		n, err := rewriteTree(filepath.Join(root, d), names)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("rewrote %d files under %s\n", n, d)
	}
}

// moduleRoot is the nearest directory above the working directory holding
// go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("wiresplit: no go.mod above the working directory")
		}
		dir = parent
	}
}
