package main

import (
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strings"
	"text/template"

	"github.com/spf13/cobra"
)

// --format TEMPLATE, docker's habit: a Go template run on each listed item
// (or on the one shown), over the SDK's types, so field names are Go's
// ({{.ID}}, {{.Name}}, {{.State}}); {{json .}} prints the wire form. A
// "table " prefix aligns the columns under a header made from the fields.

// formatCommands are the list and inspect commands that take --format; each
// prints through outputFlag.print.
var formatCommands = []string{
	"ls", "get", "ps", "forks", "version",
	"image ls", "snapshot ls", "snapshot get", "volume ls", "volume get",
	"pool ls", "pool get", "key ls", "secret ls", "team ls", "backup ls", "port ls",
}

// addFormatFlags adds --format to formatCommands.
func addFormatFlags(root *cobra.Command) {
	for _, path := range formatCommands {
		cmd, _, err := root.Find(strings.Fields(path))
		if err != nil || cmd.Flags().Lookup("output") == nil {
			panic("--format on " + path + ", which has no -o")
		}
		cmd.Flags().String("format", "", `print each item with a Go template, e.g. '{{.ID}} {{.Name}}', '{{json .}}' or 'table {{.Name}}\t{{.State}}'`)
	}
}

var templateFuncs = template.FuncMap{
	"json": func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	},
	"join":  strings.Join,
	"upper": strings.ToUpper,
	"lower": strings.ToLower,
}

// itemTemplate is a parsed --format.
type itemTemplate struct {
	t      *template.Template
	header string // for a table; "" otherwise
}

// parseFormat reads --format: "\t" and "\n" typed as two characters mean a
// tab and a newline, as in docker.
func parseFormat(text string) (*itemTemplate, error) {
	text = strings.NewReplacer(`\t`, "\t", `\n`, "\n").Replace(text)
	it := &itemTemplate{}
	if rest, ok := strings.CutPrefix(text, "table"); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
		text = strings.TrimLeft(rest, " ")
		if text == "" {
			return nil, usagef("--format table needs the columns, e.g. 'table {{.Name}}\\t{{.State}}'")
		}
		it.header = headerOf(text)
	}
	t, err := template.New("--format").Funcs(templateFuncs).Parse(text)
	if err != nil {
		return nil, usagef("--format: %v", err)
	}
	it.t = t
	return it, nil
}

var actionRE = regexp.MustCompile(`\{\{[^}]*\}\}`)
var fieldRE = regexp.MustCompile(`\.(\w+)`)

// headerOf names a table's columns: each action by the last field it reads.
func headerOf(text string) string {
	return actionRE.ReplaceAllStringFunc(text, func(action string) string {
		fields := fieldRE.FindAllStringSubmatch(action, -1)
		if len(fields) == 0 {
			return ""
		}
		return strings.ToUpper(fields[len(fields)-1][1])
	})
}

// execute prints v, or each element of v if it is a list, one a line.
func (it *itemTemplate) execute(w io.Writer, v any) error {
	out := w
	tw := newTable(w)
	if it.header != "" {
		out = tw
		fmt.Fprintln(out, it.header)
	}
	one := func(item any) error {
		var b strings.Builder
		if err := it.t.Execute(&b, item); err != nil {
			return fmt.Errorf("--format: %w", err)
		}
		_, err := fmt.Fprintln(out, b.String())
		return err
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Slice {
		for i := range rv.Len() {
			if err := one(rv.Index(i).Interface()); err != nil {
				return err
			}
		}
	} else if err := one(v); err != nil {
		return err
	}
	if it.header != "" {
		return tw.Flush()
	}
	return nil
}
