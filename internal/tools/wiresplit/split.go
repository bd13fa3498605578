package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// wireImports are the only packages wire may import: it describes data, so
// a declaration needing the network, files or a context is the client's.
var wireImports = map[string]bool{
	"bytes": true, "encoding/base64": true, "encoding/json": true, "errors": true, "fmt": true,
	"maps": true, "math": true, "slices": true, "sort": true, "strconv": true, "strings": true,
	"time": true, "unicode": true, "unicode/utf8": true,
}

// clientNames stay in sdk though their code would let them move.
var clientNames = map[string]string{
	"APIError":    "the client's error value, which IsNotFound and the other predicates test",
	"DefaultHost": "FromEnv's defaults",
}

// srcFile is one parsed Go file.
type srcFile struct {
	path    string
	src     []byte
	fset    *token.FileSet
	f       *ast.File
	imports map[string]string // local name -> import path
}

// unit is what moves or stays as a whole: a declaration, or a type
// declaration with its methods.
type unit struct {
	names  []string
	decls  []ast.Decl
	files  []*srcFile // the file of each decl
	refs   map[string]bool
	client string // why it stays in sdk; "" while it moves
}

// parseDir parses the package's non-test files, the generated aliases left
// out (they are rewritten from wire/).
func parseDir(dir string, tests bool) ([]*srcFile, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var files []*srcFile
	fset := token.NewFileSet()
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") != tests || filepath.Base(name) == aliasFile {
			continue
		}
		sf, err := parseFile(fset, name)
		if err != nil {
			return nil, err
		}
		files = append(files, sf)
	}
	return files, nil
}

func parseFile(fset *token.FileSet, name string) (*srcFile, error) {
	src, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	sf := &srcFile{path: name, src: src, fset: fset, f: f, imports: map[string]string{}}
	for _, is := range f.Imports {
		p, _ := strconv.Unquote(is.Path.Value)
		n := path.Base(p)
		if is.Name != nil {
			n = is.Name.Name
		}
		sf.imports[n] = p
	}
	return sf, nil
}

// units groups the files' declarations; byName finds a unit by a name it
// declares.
func units(files []*srcFile) (all []*unit, byName map[string]*unit) {
	byName = map[string]*unit{}
	add := func(u *unit, names ...string) {
		u.names = append(u.names, names...)
		for _, n := range names {
			byName[n] = u
		}
	}
	for _, sf := range files {
		for _, d := range sf.f.Decls {
			u := &unit{decls: []ast.Decl{d}, files: []*srcFile{sf}}
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv != nil {
					continue // with its type, below
				}
				add(u, d.Name.Name)
			case *ast.GenDecl:
				if d.Tok == token.IMPORT {
					continue
				}
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						add(u, s.Name.Name)
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.Name != "_" {
								add(u, n.Name)
							}
						}
					}
				}
			}
			all = append(all, u)
		}
	}
	for _, sf := range files {
		for _, d := range sf.f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv != nil {
				u := byName[recvType(fd)]
				u.decls = append(u.decls, fd)
				u.files = append(u.files, sf)
			}
		}
	}
	return all, byName
}

// recvType is the name of a method's receiver type.
func recvType(fd *ast.FuncDecl) string {
	t := fd.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.ParenExpr:
			t = x.X
		case *ast.Ident:
			return x.Name
		default:
			panic(fmt.Sprintf("receiver %T", t))
		}
	}
}

// scan fills u.refs with the package-level names (of top) its code refers
// to, and returns the import paths it uses.
func (u *unit) scan(top map[string]bool) []string {
	u.refs = map[string]bool{}
	var imps []string
	for i, d := range u.decls {
		sf := u.files[i]
		var visit func(n ast.Node) bool
		visit = func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.SelectorExpr:
				if id, ok := x.X.(*ast.Ident); ok && id.Obj == nil && !top[id.Name] {
					if p, ok := sf.imports[id.Name]; ok {
						imps = append(imps, p)
						return false
					}
				}
				ast.Inspect(x.X, visit) // x.Sel is a field or method, not a package-level name
				return false
			case *ast.Field:
				if x.Type != nil {
					ast.Inspect(x.Type, visit) // the names are the field's own
				}
				return false
			case *ast.FuncDecl:
				for _, n := range []ast.Node{x.Recv, x.Type, x.Body} {
					if !isNil(n) {
						ast.Inspect(n, visit)
					}
				}
				return false
			case *ast.Ident:
				if top[x.Name] && (x.Obj == nil || sf.f.Scope.Lookup(x.Name) == x.Obj) {
					u.refs[x.Name] = true
				}
			}
			return true
		}
		ast.Inspect(d, visit)
	}
	return imps
}

// holdsFuncs reports whether a type of gd is a struct with a field of
// function type: the client's callbacks.
func holdsFuncs(gd *ast.GenDecl) bool {
	for _, s := range gd.Specs {
		st, ok := s.(*ast.TypeSpec).Type.(*ast.StructType)
		if !ok {
			continue
		}
		for _, f := range st.Fields.List {
			t := f.Type
			if p, ok := t.(*ast.StarExpr); ok {
				t = p.X
			}
			if _, ok := t.(*ast.FuncType); ok {
				return true
			}
		}
	}
	return false
}

func isNil(n ast.Node) bool {
	switch n := n.(type) {
	case *ast.FieldList:
		return n == nil
	case *ast.BlockStmt:
		return n == nil
	case *ast.FuncType:
		return n == nil
	}
	return n == nil
}

// classify marks the units that stay in sdk, with the reason.
func classify(all []*unit, byName map[string]*unit, testRefs map[string]string) {
	top := map[string]bool{}
	for n := range byName {
		top[n] = true
	}
	for _, u := range all {
		for _, p := range u.scan(top) {
			if !wireImports[p] && u.client == "" {
				u.client = "imports " + p
			}
		}
		for _, d := range u.decls {
			if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.VAR && u.client == "" {
				u.client = "a variable (wire holds none)"
			}
			if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.TYPE && holdsFuncs(gd) && u.client == "" {
				u.client = "holds functions, which the wire cannot carry"
			}
		}
		for _, n := range u.names {
			if why, ok := clientNames[n]; ok {
				u.client = why
			} else if strings.HasSuffix(n, "Option") || strings.HasSuffix(n, "Options") {
				u.client = "a parameter of a client call"
			}
		}
	}
	for n, file := range testRefs {
		if u := byName[n]; u != nil && u.client == "" {
			u.client = "unexported, used by " + file
		}
	}
	for changed := true; changed; {
		changed = false
		for _, u := range all {
			for r := range u.refs {
				v := byName[r]
				switch {
				case u.client == "" && v.client != "":
					u.client, changed = "refers to "+r, true
				case u.client != "" && v.client == "" && !ast.IsExported(r):
					v.client, changed = "unexported, used by "+u.names[0], true
				}
			}
		}
	}
}

// unexportedTestRefs are the unexported package-level names that package
// sdk's own tests use, by the test file using them: those stay in sdk.
func unexportedTestRefs(sdkDir string) (map[string]string, error) {
	files, err := parseDir(sdkDir, true)
	if err != nil {
		return nil, err
	}
	refs := map[string]string{}
	for _, sf := range files {
		if sf.f.Name.Name != "sdk" {
			continue
		}
		ast.Inspect(sf.f, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && id.Obj == nil && !ast.IsExported(id.Name) {
				refs[id.Name] = filepath.Base(sf.path)
			}
			return true
		})
	}
	return refs, nil
}

// cut is a byte range of a file to remove.
type cut struct{ start, end int }

// declRange is the bytes of d in its file: its doc comment, the declaration,
// a comment on its last line, and the line's end.
func declRange(sf *srcFile, d ast.Decl) cut {
	start := d.Pos()
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Doc != nil {
			start = d.Doc.Pos()
		}
	case *ast.GenDecl:
		if d.Doc != nil {
			start = d.Doc.Pos()
		}
	}
	end := d.End()
	line := sf.fset.Position(end).Line
	for _, cg := range sf.f.Comments {
		if cg.Pos() >= end && sf.fset.Position(cg.Pos()).Line == line {
			end = cg.End()
		}
	}
	s, e := sf.fset.Position(start).Offset, sf.fset.Position(end).Offset
	for e < len(sf.src) && sf.src[e] != '\n' {
		e++
	}
	if e < len(sf.src) {
		e++
	}
	return cut{s, e}
}

// split moves the wire declarations of sdkDir's files into wireDir and
// returns a line per moved declaration.
func split(sdkDir, wireDir string, why bool) ([]string, error) {
	sdkFiles, err := parseDir(sdkDir, false)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(wireDir, 0o755); err != nil {
		return nil, err
	}
	wireFiles, err := parseDir(wireDir, false)
	if err != nil {
		return nil, err
	}
	all, byName := units(sdkFiles)
	testRefs, err := unexportedTestRefs(sdkDir)
	if err != nil {
		return nil, err
	}
	classify(all, byName, testRefs)
	if why {
		for _, u := range all {
			fmt.Printf("%-40s %s\n", strings.Join(u.names, ","), cmpOr(u.client, "moves"))
		}
		return nil, nil
	}
	_, wireByName := units(wireFiles)

	cuts := map[*srcFile][]cut{}
	added := map[string][]string{} // wire file base name -> moved texts
	from := map[string]*srcFile{}  // wire file base name -> an sdk file moving into it
	var moved []string
	for _, u := range all {
		if u.client != "" {
			continue
		}
		// A name wire declares too (a merge brought an older or newer copy
		// back into sdk/): sdk's text wins, wire's goes.
		for _, n := range u.names {
			w := wireByName[n]
			if w == nil || w.refs != nil {
				continue
			}
			for _, wn := range w.names {
				if !slices.Contains(u.names, wn) {
					return nil, fmt.Errorf("%s is declared in sdk/ and wire/, but wire/ declares %s with it and sdk/ does not: resolve by hand", n, wn)
				}
			}
			w.refs = map[string]bool{} // marks it done
			for i, d := range w.decls {
				cuts[w.files[i]] = append(cuts[w.files[i]], declRange(w.files[i], d))
			}
		}
		for i, d := range u.decls {
			sf := u.files[i]
			c := declRange(sf, d)
			cuts[sf] = append(cuts[sf], c)
			base := filepath.Base(sf.path)
			added[base] = append(added[base], string(sf.src[c.start:c.end]))
			from[base] = sf
			moved = append(moved, fmt.Sprintf("%s %s -> wire/%s", base, declName(d), base))
		}
	}
	if len(moved) == 0 {
		return nil, nil
	}
	for _, sf := range sdkFiles {
		if cs := cuts[sf]; len(cs) > 0 {
			if err := writeCut(sf, cs, "", nil); err != nil {
				return nil, err
			}
		}
	}
	for _, sf := range wireFiles {
		base := filepath.Base(sf.path)
		if cs, more := cuts[sf], added[base]; len(cs) > 0 || len(more) > 0 {
			if err := writeCut(sf, cs, strings.Join(more, "\n"), from[base]); err != nil {
				return nil, err
			}
			delete(added, base)
		}
	}
	for base, texts := range added {
		sf := from[base]
		header := "package wire\n"
		if c := buildConstraint(sf); c != "" {
			header = c + "\n\n" + header
		}
		out := &srcFile{path: filepath.Join(wireDir, base), src: []byte(header), fset: token.NewFileSet(), imports: map[string]string{}}
		if out.f, err = parser.ParseFile(out.fset, out.path, out.src, parser.ParseComments); err != nil {
			return nil, err
		}
		if err := writeCut(out, nil, strings.Join(texts, "\n"), sf); err != nil {
			return nil, err
		}
	}
	return moved, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func declName(d ast.Decl) string {
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv != nil {
			return recvType(d) + "." + d.Name.Name
		}
		return d.Name.Name
	case *ast.GenDecl:
		var names []string
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				names = append(names, s.Name.Name)
			case *ast.ValueSpec:
				for _, n := range s.Names {
					names = append(names, n.Name)
				}
			}
		}
		if len(names) > 3 {
			return fmt.Sprintf("%s %s… (%d names)", d.Tok, names[0], len(names))
		}
		return d.Tok.String() + " " + strings.Join(names, ", ")
	}
	return "?"
}

// buildConstraint is sf's //go:build line, if it has one.
func buildConstraint(sf *srcFile) string {
	for _, cg := range sf.f.Comments {
		if cg.Pos() >= sf.f.Package {
			break
		}
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, "//go:build ") {
				return c.Text
			}
		}
	}
	return ""
}

// writeCut rewrites sf without the cut ranges and with extra appended, its
// imports recomputed from what it had and what extra's file (src) had. A
// file left with no declaration and no package comment is removed.
func writeCut(sf *srcFile, cuts []cut, extra string, src *srcFile) error {
	// The header runs through the package clause's line; the body starts
	// after the last import declaration.
	hdrEnd := sf.fset.Position(sf.f.Name.End()).Offset
	for hdrEnd < len(sf.src) && sf.src[hdrEnd] != '\n' {
		hdrEnd++
	}
	bodyStart := hdrEnd
	for _, d := range sf.f.Decls {
		if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.IMPORT {
			bodyStart = declRange(sf, gd).end
		}
	}
	sort.Slice(cuts, func(i, j int) bool { return cuts[i].start < cuts[j].start })
	var body bytes.Buffer
	at := bodyStart
	for _, c := range cuts {
		body.Write(sf.src[at:c.start])
		at = c.end
	}
	body.Write(sf.src[at:])
	if extra != "" {
		body.WriteString("\n" + extra)
	}
	cands := map[string]string{}
	for _, from := range []*srcFile{sf, src} {
		if from != nil {
			for n, p := range from.imports {
				cands[n] = p
			}
		}
	}
	header := string(sf.src[:hdrEnd]) + "\n"
	out, ndecl, err := withImports(header, body.String(), cands)
	if err != nil {
		return fmt.Errorf("%s: %v", sf.path, err)
	}
	if ndecl == 0 && sf.f.Doc == nil {
		err := os.Remove(sf.path)
		if os.IsNotExist(err) {
			err = nil
		}
		return err
	}
	return os.WriteFile(sf.path, out, 0o644)
}

// withImports assembles header, an import block of the candidates that body
// uses, and body; gofmt'd. It also returns the number of declarations.
func withImports(header, body string, cands map[string]string) ([]byte, int, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", header+body, parser.ParseComments)
	if err != nil {
		return nil, 0, err
	}
	used := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if se, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := se.X.(*ast.Ident); ok && id.Obj == nil && cands[id.Name] != "" {
				used[id.Name] = true
			}
		}
		return true
	})
	var std, other []string
	for n, p := range cands {
		if !used[n] && n != "_" {
			continue
		}
		spec := strconv.Quote(p)
		if n != path.Base(p) {
			spec = n + " " + spec
		}
		if strings.Contains(strings.SplitN(p, "/", 2)[0], ".") {
			other = append(other, spec)
		} else {
			std = append(std, spec)
		}
	}
	sort.Strings(std)
	sort.Strings(other)
	var b strings.Builder
	b.WriteString(header)
	if specs := append(std, other...); len(specs) == 1 {
		b.WriteString("\nimport " + specs[0] + "\n")
	} else if len(specs) > 1 {
		b.WriteString("\nimport (\n")
		for _, s := range std {
			b.WriteString("\t" + s + "\n")
		}
		if len(std) > 0 && len(other) > 0 {
			b.WriteString("\n")
		}
		for _, s := range other {
			b.WriteString("\t" + s + "\n")
		}
		b.WriteString(")\n")
	}
	b.WriteString(body)
	out, err := format.Source([]byte(b.String()))
	return out, len(f.Decls), err
}
