// Package sdkdoc reads the source of package wire (wire/, the types the API
// sends and receives, which package sdk re-exports): the doc comments of its
// types and their fields, and its typed constants. The OpenAPI document
// (internal/api) takes its descriptions and defaults from these comments,
// and wire's lists of every Code and State are generated from the constants,
// so neither is a hand-kept copy. Run it with
//
//	go generate ./internal/api
//
// TestSDKDocsGenerated (internal/api) fails while a generated file is stale.
package sdkdoc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Info is what the generated files are made from.
type Info struct {
	Docs     map[string]string // "Type" and "Type.Field" (Go names): the doc comment as one paragraph
	Defaults map[string]string // "Type.Field": the JSON value of the comment's "Default: V." sentence
	Consts   map[string][]Const
}

// Const is one typed constant: its Go name and its string value.
type Const struct{ Name, Value string }

// defaultRe finds a field's default in its comment: a sentence
// "Default: V." whose V is a JSON value (10, true, "/workspace").
var defaultRe = regexp.MustCompile(`(?:^|\. )Default: (.+?)\.(?: |$)`)

// Parse reads the non-test Go files of the package in dir. The file that
// declares a type comes first for its constants, so that State's constants
// keep the order of the file that defines State.
func Parse(dir string) (*Info, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	info := &Info{Docs: map[string]string{}, Defaults: map[string]string{}, Consts: map[string][]Const{}}
	fset := token.NewFileSet()
	var files []*ast.File
	declaredIn := map[string]int{} // type name -> index in files
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, spec := range gd.Specs {
				ts := spec.(*ast.TypeSpec)
				declaredIn[ts.Name.Name] = len(files) - 1
				doc := ts.Doc
				if doc == nil && len(gd.Specs) == 1 {
					doc = gd.Doc
				}
				if t := text(doc); t != "" {
					info.Docs[ts.Name.Name] = t
				}
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					continue
				}
				for _, fld := range st.Fields.List {
					t := strings.TrimSpace(text(fld.Doc) + " " + text(fld.Comment))
					for _, id := range fld.Names {
						if t == "" || !id.IsExported() {
							continue
						}
						key := ts.Name.Name + "." + id.Name
						info.Docs[key] = t
						if m := defaultRe.FindStringSubmatch(t); m != nil {
							if !json.Valid([]byte(m[1])) {
								return nil, fmt.Errorf("%s: %s's default %s is not a JSON value", fset.Position(id.Pos()), key, m[1])
							}
							info.Defaults[key] = m[1]
						}
					}
				}
			}
		}
	}
	fileOf := map[Const]int{}
	for i, f := range files {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				id, ok := vs.Type.(*ast.Ident)
				if !ok || len(vs.Values) != len(vs.Names) {
					continue
				}
				for j, v := range vs.Values {
					if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						s, _ := strconv.Unquote(lit.Value)
						c := Const{vs.Names[j].Name, s}
						fileOf[c] = i
						info.Consts[id.Name] = append(info.Consts[id.Name], c)
					}
				}
			}
		}
	}
	for typ, cs := range info.Consts {
		home := declaredIn[typ]
		slices.SortStableFunc(cs, func(a, b Const) int {
			return cmpBool(fileOf[a] != home, fileOf[b] != home)
		})
	}
	return info, nil
}

// text is a comment as one paragraph.
func text(cg *ast.CommentGroup) string {
	if cg == nil {
		return ""
	}
	return strings.Join(strings.Fields(cg.Text()), " ")
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// Generated is the content of each generated file, by its path from the
// module root.
func Generate(root string) (map[string][]byte, error) {
	info, err := Parse(filepath.Join(root, "wire"))
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\n\npackage wire\n\n", header)
	codes := slices.Clone(info.Consts["Code"])
	sort.Slice(codes, func(i, j int) bool { return codes[i].Value < codes[j].Value })
	list(&b, "Codes returns every error Code, sorted.", "Codes", "Code", codes)
	list(&b, "States returns every sandbox State, in the order wire declares them.", "States", "State", info.Consts["State"])
	if out["wire/enums_gen.go"], err = format.Source(b.Bytes()); err != nil {
		return nil, err
	}
	b.Reset()
	fmt.Fprintf(&b, "%s\n\npackage api\n\n", header)
	dict(&b, "sdkDocs are the doc comments of package wire's types and fields, by \"Type\" and\n// \"Type.Field\" (Go names): the document's descriptions.", "sdkDocs", info.Docs)
	dict(&b, "sdkDefaults are the fields' defaults (the JSON value of their comment's\n// \"Default: V.\" sentence), by \"Type.Field\".", "sdkDefaults", info.Defaults)
	if out["internal/api/openapi_docs_gen.go"], err = format.Source(b.Bytes()); err != nil {
		return nil, err
	}
	return out, nil
}

const header = "// Code generated by go run ./internal/sdkdoc/gen from the source of package wire; DO NOT EDIT."

func list(b *bytes.Buffer, doc, fn, typ string, cs []Const) {
	fmt.Fprintf(b, "// %s\nfunc %s() []%s {\n\treturn []%s{\n", doc, fn, typ, typ)
	for _, c := range cs {
		fmt.Fprintf(b, "\t\t%s,\n", c.Name)
	}
	b.WriteString("\t}\n}\n\n")
}

func dict(b *bytes.Buffer, doc, name string, m map[string]string) {
	fmt.Fprintf(b, "// %s\nvar %s = map[string]string{\n", doc, name)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(b, "\t%q: %q,\n", k, m[k])
	}
	b.WriteString("}\n\n")
}

// Write writes the generated files under root.
func Write(root string) error {
	files, err := Generate(root)
	if err != nil {
		return err
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(root, name), content, 0o644); err != nil {
			return err
		}
	}
	return nil
}
