package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// mibFlag is a size flag stored in MiB: a bare number is MiB (as before),
// and docker's suffixes b, k, m, g (powers of 1024, either case, with or
// without a trailing "b" or "ib") give other units, so --memory 512m and
// --disk 2g read as they do for docker run. A size that is not a whole
// number of MiB is refused, not rounded.
type mibFlag struct{ mib *int }

func (f mibFlag) String() string {
	if f.mib == nil {
		return "0"
	}
	return strconv.Itoa(*f.mib)
}

func (mibFlag) Type() string { return "size" }

func (f mibFlag) Set(s string) error {
	n, err := parseMiB(s)
	if err != nil {
		return err
	}
	*f.mib = n
	return nil
}

var sizeUnits = map[string]float64{"b": 1.0 / (1 << 20), "k": 1.0 / (1 << 10), "m": 1, "g": 1 << 10, "t": 1 << 20}

func parseMiB(s string) (int, error) {
	t := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(s)), "ib") // 2GiB is 2g
	if n := len(t); n > 1 && t[n-1] == 'b' && strings.ContainsRune("kmgt", rune(t[n-2])) {
		t = t[:n-1] // 512mb is 512m
	}
	unit := 1.0 // a bare number is MiB
	if n := len(t); n > 0 {
		if u, ok := sizeUnits[t[n-1:]]; ok {
			unit, t = u, t[:n-1]
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("%q is not a size: give MiB (512) or a number with b, k, m or g (512m, 2g)", s)
	}
	mib := v * unit
	if mib != math.Trunc(mib) || mib > math.MaxInt32 {
		return 0, fmt.Errorf("%q is not a whole number of MiB", s)
	}
	return int(mib), nil
}

// mibVar defines a size flag in MiB on fs (see mibFlag).
func mibVar(fs *pflag.FlagSet, p *int, name, usage string) {
	fs.Var(mibFlag{p}, name, usage+" (MiB, or with a unit: 512m, 2g)")
}
