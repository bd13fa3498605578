// Command memcheck is the integrity checker of the gVisor integration tests.
// It runs inside a sandbox, built static (CGO_ENABLED=0).
//
//	memcheck hold MIB DIR   hold MIB MiB of random data and its checksum;
//	                        write DIR/memcheck.pid; every 100 ms append
//	                        "tick N" to DIR/memcheck.log through one open
//	                        file (its offset must survive a checkpoint); on
//	                        SIGUSR1 checksum the data again and write
//	                        "ok|BAD NONCE CHECKS TICK" to DIR/memcheck.status
//	memcheck listen PATH    listen on a unix socket at PATH until killed
package main

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) == 3 && os.Args[1] == "listen" {
		l, err := net.Listen("unix", os.Args[2])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		for {
			if c, err := l.Accept(); err == nil {
				c.Close()
			}
		}
	}
	if len(os.Args) != 4 || os.Args[1] != "hold" {
		fmt.Fprintln(os.Stderr, "usage: memcheck hold MIB DIR | memcheck listen PATH")
		os.Exit(2)
	}
	mib, err := strconv.Atoi(os.Args[2])
	if err != nil || mib <= 0 {
		fmt.Fprintln(os.Stderr, "bad MIB")
		os.Exit(2)
	}
	dir := os.Args[3]
	data := make([]byte, mib<<20)
	if _, err := rand.Read(data); err != nil {
		panic(err)
	}
	want := sha256.Sum256(data)
	nonce := make([]byte, 8)
	rand.Read(nonce)
	log, err := os.OpenFile(filepath.Join(dir, "memcheck.log"), os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		panic(err)
	}
	checks, tick := 0, 0
	status := func() {
		got := sha256.Sum256(data)
		verdict := "ok"
		if got != want {
			verdict = "BAD"
		}
		line := fmt.Sprintf("%s %s %d %d\n", verdict, hex.EncodeToString(nonce), checks, tick)
		tmp := filepath.Join(dir, "memcheck.status.tmp")
		if err := os.WriteFile(tmp, []byte(line), 0o644); err == nil {
			os.Rename(tmp, filepath.Join(dir, "memcheck.status"))
		}
	}
	status()
	if err := os.WriteFile(filepath.Join(dir, "memcheck.pid"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		panic(err)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGUSR1)
	t := time.NewTicker(100 * time.Millisecond)
	for {
		select {
		case <-sigs:
			checks++
			status()
		case <-t.C:
			tick++
			fmt.Fprintf(log, "tick %d\n", tick)
		}
	}
}
