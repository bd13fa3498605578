// Command sweep replaces the literal error codes in Go files with the
// constants of wire/codes.go and adds the wire import where needed.
//
//	go run ./internal/errdefs/codescan/sweep [-n] DIR_OR_FILE...
//
// -n lists what would change without writing. Literals that name no
// declared code are reported and left alone (declare them in wire/codes.go
// and run again). Test files are left alone: they may spell the wire form.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sbxhq/sbx/internal/errdefs/codescan"
)

func main() {
	dry := flag.Bool("n", false, "only list the files that would change")
	codes := flag.String("codes", "wire/codes.go", "the file declaring the codes")
	flag.Parse()
	declared, err := codescan.Declared(*codes)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sweep:", err)
		os.Exit(1)
	}
	failed := false
	for _, arg := range flag.Args() {
		files := []string{arg}
		if st, err := os.Stat(arg); err == nil && st.IsDir() {
			if files, err = codescan.GoFiles(arg); err != nil {
				fmt.Fprintln(os.Stderr, "sweep:", err)
				os.Exit(1)
			}
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") || filepath.Clean(f) == filepath.Clean(*codes) {
				continue
			}
			out, changed, unknown, err := codescan.Rewrite(f, declared)
			if err != nil {
				fmt.Fprintf(os.Stderr, "sweep: %s: %v\n", f, err)
				failed = true
				continue
			}
			for _, u := range unknown {
				fmt.Fprintf(os.Stderr, "%s: undeclared code %q\n", u.Pos, u.Value)
				failed = true
			}
			if !changed {
				continue
			}
			fmt.Println(f)
			if !*dry {
				if err := os.WriteFile(f, out, 0o644); err != nil {
					fmt.Fprintln(os.Stderr, "sweep:", err)
					os.Exit(1)
				}
			}
		}
	}
	if failed {
		os.Exit(1)
	}
}
