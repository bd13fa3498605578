package main

import (
	"fmt"
	"os"
	"path/filepath"
)

// The task every submission solves: read whitespace-separated integers on
// stdin and print their sum. Each case is an input and the expected output.
var cases = []struct{ stdin, want string }{
	{"1 2 3\n", "6"},
	{"10 -4\n7 100\n", "113"},
}

// Submission is one untrusted program: a shell script run by the image's sh.
type Submission struct {
	Name   string
	Script string
}

// kinds are the bundled submissions, by what their author got right or
// wrong; the kind is the end of each file name ("0007-loop.sh"), so a
// reader of the results table (and integration/examples_test.go) can tell
// what each one should get.
var kinds = []struct {
	kind    string
	scripts []string
}{
	{"correct", []string{
		`awk '{ for (i = 1; i <= NF; i++) s += $i } END { print s + 0 }'`,
		`s=0; for n in $(cat); do s=$((s + n)); done; echo $s`,
		`set -- $(cat); s=0; while [ $# -gt 0 ]; do s=$((s + $1)); shift; done; echo "$s"`,
		`tr -s ' \n' '\n\n' | grep . | paste -sd+ | bc`,
	}},
	{"wrong", []string{
		`awk '{ for (i = 1; i <= NF; i++) s += $i } END { print s + 1 }'`,         // off by one
		`awk '{ n += NF } END { print n }'`,                                       // counts instead of adding
		`head -n 1 | awk '{ for (i = 1; i <= NF; i++) s += $i } END { print s }'`, // reads one line
	}},
	{"loop", []string{
		`while :; do :; done`,
		`yes > /dev/null`,
	}},
	{"net", []string{
		// Documentation addresses (TEST-NET-1 and -2): nothing is there,
		// and a sandbox without a network cannot even try to reach them.
		// (Not busybox's wget -T, which dies of SIGSEGV here.)
		`echo 'GET /answer HTTP/1.0' | nc -w 3 192.0.2.1 80`,
		`nc -w 3 198.51.100.7 443 < /dev/null && echo 6`,
	}},
	{"memory", []string{
		`dd if=/dev/zero of=/dev/null bs=256M count=1`, // one 256 MiB buffer
		// dd is the one the OOM killer picks; the shell reports exit 137.
		`echo reading; dd if=/dev/zero of=/dev/null bs=200M count=3 && echo 6`,
	}},
}

// mix is how many of each kind there are in every 20 bundled submissions.
var mix = map[string]int{"correct": 12, "wrong": 3, "loop": 2, "net": 2, "memory": 1}

// bundled returns n submissions in the proportions of mix, interleaved so
// that every stretch of the run sees every kind.
func bundled(n int) []Submission {
	var order []string
	for len(order) < 20 {
		for _, k := range kinds {
			if c := countOf(order, k.kind); c < mix[k.kind] {
				order = append(order, k.kind)
			}
		}
	}
	var out []Submission
	seen := map[string]int{}
	for i := 0; i < n; i++ {
		kind := order[i%len(order)]
		scripts := scriptsOf(kind)
		out = append(out, Submission{
			Name:   fmt.Sprintf("%04d-%s.sh", i+1, kind),
			Script: scripts[seen[kind]%len(scripts)],
		})
		seen[kind]++
	}
	return out
}

func countOf(list []string, s string) int {
	n := 0
	for _, v := range list {
		if v == s {
			n++
		}
	}
	return n
}

func scriptsOf(kind string) []string {
	for _, k := range kinds {
		if k.kind == kind {
			return k.scripts
		}
	}
	return nil
}

// fromDir reads every regular file of dir as a submission, by name.
func fromDir(dir string) ([]Submission, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []Submission
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, Submission{Name: e.Name(), Script: string(b)})
	}
	return out, nil // os.ReadDir sorts by name
}
