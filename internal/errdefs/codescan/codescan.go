// Package codescan finds the error codes that Go source spells as string
// literals ("SANDBOX_NOT_FOUND") instead of wire constants, and rewrites them.
// Its test keeps the repository honest (every code used is declared in
// wire/codes.go); the sweep command under it rewrites packages that still
// spell codes out.
package codescan

import (
	"bytes"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// wireImport is the import path of the package that declares the codes.
const wireImport = "github.com/sbxhq/sbx/wire"

var codeRe = regexp.MustCompile(`^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$`)

// constructors are the errdefs functions whose first argument is a code.
var constructors = map[string]bool{"Invalid": true, "NotFound": true, "Conflict": true,
	"Unavailable": true, "Unauthorized": true, "TooLarge": true, "DiskFull": true,
	"Forbidden": true, "RateLimited": true}

// errorTypes are the struct types whose Code field is an error code (not,
// say, RunCodeRequest.Code, which is program text).
var errorTypes = map[string]bool{"Error": true, "ErrorBody": true, "CodeError": true, "APIError": true}

// Use is one literal code in a file.
type Use struct {
	Pos        token.Position
	Value      string // without quotes
	start, end int    // byte offsets of the literal, quotes included
}

// Literals returns the literal codes of a parsed file: first arguments of
// errdefs constructors, Code fields of error composite literals, and
// comparisons of a code (errdefs.CodeOf(err), x.Code) with a literal.
func Literals(fset *token.FileSet, f *ast.File) []Use {
	var out []Use
	add := func(e ast.Expr) {
		lit, ok := e.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return
		}
		v, err := strconv.Unquote(lit.Value)
		if err != nil || !codeRe.MatchString(v) {
			return
		}
		out = append(out, Use{Pos: fset.Position(lit.Pos()), Value: v,
			start: fset.Position(lit.Pos()).Offset, end: fset.Position(lit.End()).Offset})
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && constructors[sel.Sel.Name] && isIdent(sel.X, "errdefs") && len(n.Args) > 0 {
				add(n.Args[0])
			}
		case *ast.CompositeLit:
			if !errorTypes[typeName(n.Type)] {
				return true
			}
			for _, el := range n.Elts {
				if kv, ok := el.(*ast.KeyValueExpr); ok && isIdent(kv.Key, "Code") {
					add(kv.Value)
				}
			}
		case *ast.BinaryExpr:
			if n.Op != token.EQL && n.Op != token.NEQ {
				return true
			}
			if isCodeExpr(n.X) {
				add(n.Y)
			}
			if isCodeExpr(n.Y) {
				add(n.X)
			}
		}
		return true
	})
	return out
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

func typeName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.Ident:
		return t.Name
	case *ast.SelectorExpr:
		return t.Sel.Name
	}
	return ""
}

// isCodeExpr reports whether e reads a code: errdefs.CodeOf(...) or x.Code.
func isCodeExpr(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.CallExpr:
		sel, ok := e.Fun.(*ast.SelectorExpr)
		return ok && sel.Sel.Name == "CodeOf" && isIdent(sel.X, "errdefs")
	case *ast.SelectorExpr:
		return e.Sel.Name == "Code"
	}
	return false
}

// Declared parses the file declaring the codes (wire/codes.go) and returns
// each code's value mapped to its constant's name.
func Declared(path string) (map[string]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if i >= len(vs.Values) {
					continue
				}
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					v, _ := strconv.Unquote(lit.Value)
					out[v] = name.Name
				}
			}
		}
	}
	return out, nil
}

// Rewrite replaces the literal codes in the Go file at path with the wire
// constants named in declared, adding the wire import where needed, and
// returns the formatted source, whether it changed, and the literals that
// name no declared code (left as they are).
func Rewrite(path string, declared map[string]string) (out []byte, changed bool, unknown []Use, err error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, false, nil, err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ImportsOnly|parser.ParseComments)
	if err != nil {
		return nil, false, nil, err
	}
	full, err := parser.ParseFile(fset, path, src, parser.ParseComments)
	if err != nil {
		return nil, false, nil, err
	}
	inWire := full.Name.Name == "wire"
	uses := Literals(fset, full)
	sort.Slice(uses, func(i, j int) bool { return uses[i].start > uses[j].start })
	buf := append([]byte(nil), src...)
	for _, u := range uses {
		name, ok := declared[u.Value]
		if !ok {
			unknown = append(unknown, u)
			continue
		}
		if !inWire {
			name = "wire." + name
		}
		buf = append(buf[:u.start], append([]byte(name), buf[u.end:]...)...)
		changed = true
	}
	if !changed {
		return src, false, unknown, nil
	}
	if !inWire && !imports(f, wireImport) {
		buf = addImport(buf, fset, f)
	}
	out, err = format.Source(buf)
	return out, true, unknown, err
}

func imports(f *ast.File, path string) bool {
	for _, im := range f.Imports {
		if p, _ := strconv.Unquote(im.Path.Value); p == path {
			return true
		}
	}
	return false
}

// addImport adds the wire import to src, whose import block f describes.
// Offsets in f are those of the original source, and every rewrite above
// lies after the imports, so they still hold.
func addImport(src []byte, fset *token.FileSet, f *ast.File) []byte {
	line := strconv.Quote(wireImport)
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.IMPORT {
			continue
		}
		if gd.Lparen.IsValid() {
			at := fset.Position(gd.Rparen).Offset
			return splice(src, at, "\t"+line+"\n")
		}
		at := fset.Position(gd.End()).Offset
		return splice(src, at, "\nimport "+line+"\n")
	}
	at := fset.Position(f.Name.End()).Offset
	return splice(src, at, "\n\nimport "+line+"\n")
}

func splice(src []byte, at int, s string) []byte {
	var b bytes.Buffer
	b.Write(src[:at])
	b.WriteString(s)
	b.Write(src[at:])
	return b.Bytes()
}

// GoFiles lists the non-test Go files under root, skipping testdata and
// hidden directories.
func GoFiles(root string) ([]string, error) {
	var out []string
	err := walk(root, func(p string) {
		if strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
			out = append(out, p)
		}
	})
	return out, err
}
