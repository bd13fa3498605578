package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
)

// rewriteTree rewrites the Go files under dir (rewriteFile) and returns how
// many changed.
func rewriteTree(dir string, names map[string]bool) (int, error) {
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || filepath.Ext(p) != ".go" {
			return nil
		}
		changed, err := rewriteFile(p, names)
		if changed {
			n++
		}
		return err
	})
	return n, err
}

// edit replaces src[start:end] with text.
type edit struct {
	start, end int
	text       string
}

// commentRef is sdk.Name in a comment.
var commentRef = regexp.MustCompile(`\bsdk\.([A-Z]\w*)`)

// rewriteFile makes the file at p name wire.X for every X of names it
// names through the sdk import, in code and comments, imports wire where it
// now needs it, and drops the sdk import where nothing else uses it.
func rewriteFile(p string, names map[string]bool) (bool, error) {
	src, err := os.ReadFile(p)
	if err != nil {
		return false, err
	}
	if !bytes.Contains(src, []byte("sdk.")) {
		return false, nil
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, p, src, parser.ParseComments)
	if err != nil {
		return false, err
	}
	var sdkSpec, wireSpec *ast.ImportSpec
	var importDecl *ast.GenDecl
	for _, d := range f.Decls {
		if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.IMPORT {
			for _, s := range gd.Specs {
				is := s.(*ast.ImportSpec)
				switch is.Path.Value {
				case strconv.Quote(sdkImport):
					sdkSpec, importDecl = is, gd
				case strconv.Quote(wireImport):
					wireSpec = is
				}
			}
		}
	}
	sdkName, wireName := "sdk", "wire"
	if sdkSpec != nil && sdkSpec.Name != nil {
		sdkName = sdkSpec.Name.Name
	}
	if wireSpec != nil && wireSpec.Name != nil {
		wireName = wireSpec.Name.Name
	}
	if sdkName == "_" || sdkName == "." {
		return false, nil
	}
	off := func(pos token.Pos) int { return fset.Position(pos).Offset }
	var edits []edit
	left := 0 // uses of sdk that stay
	var taken *ast.Ident
	ast.Inspect(f, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && id.Name == wireName && id.Obj != nil {
			taken = id
		}
		se, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if id, ok := se.X.(*ast.Ident); ok && id.Name == sdkName && id.Obj == nil && sdkSpec != nil {
			if names[se.Sel.Name] {
				edits = append(edits, edit{off(id.Pos()), off(id.End()), wireName})
			} else {
				left++
			}
		}
		return true
	})
	code := len(edits)
	if code > 0 && wireSpec == nil && taken != nil {
		return false, fmt.Errorf("%s: the name %s is taken; import wire by hand under another name", fset.Position(taken.Pos()), wireName)
	}
	if sdkName == "sdk" {
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				for _, m := range commentRef.FindAllStringSubmatchIndex(c.Text, -1) {
					if names[c.Text[m[2]:m[3]]] {
						at := off(c.Pos()) + m[0]
						edits = append(edits, edit{at, at + len("sdk"), "wire"})
					}
				}
			}
		}
	}
	if len(edits) == 0 {
		return false, nil
	}
	// The imports: wire beside sdk, or in sdk's place. A file that does
	// not import sdk had only comments to rewrite.
	wireLine := strconv.Quote(wireImport)
	var specStart, specEnd int
	if sdkSpec != nil {
		specStart, specEnd = off(sdkSpec.Pos()), off(sdkSpec.End())
		if sdkSpec.Comment != nil {
			specEnd = off(sdkSpec.Comment.End())
		}
	}
	switch {
	case sdkSpec == nil || code == 0:
	case left == 0 && wireSpec == nil:
		edits = append(edits, edit{specStart, specEnd, wireLine})
	case left == 0:
		ls, le := lineOf(src, specStart, specEnd)
		edits = append(edits, edit{ls, le, ""})
	case wireSpec == nil && importDecl.Lparen.IsValid():
		edits = append(edits, edit{specEnd, specEnd, "\n" + wireLine})
	case wireSpec == nil:
		edits = append(edits, edit{specStart, specEnd, "(\n" + string(src[specStart:specEnd]) + "\n" + wireLine + "\n)"})
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].start > edits[j].start })
	out := src
	for _, e := range edits {
		out = append(out[:e.start:e.start], append([]byte(e.text), out[e.end:]...)...)
	}
	if out, err = format.Source(out); err != nil {
		return false, fmt.Errorf("%s: %v", p, err)
	}
	if bytes.Equal(out, src) {
		return false, nil
	}
	return true, os.WriteFile(p, out, 0o644)
}

// lineOf widens [start, end) to whole lines.
func lineOf(src []byte, start, end int) (int, int) {
	for start > 0 && src[start-1] != '\n' {
		start--
	}
	for end < len(src) && src[end] != '\n' {
		end++
	}
	if end < len(src) {
		end++
	}
	return start, end
}
