// Command wsecho is a test server that the network tests build (static,
// CGO_ENABLED=0), upload into a sandbox and run there. It serves on :8081:
//
//	/echo     WebSocket: sends every message back
//	/stream   writes "first", flushes, waits for /release, writes "second"
//	/release  lets /stream finish
//	/headers  the request's headers and query, one per line
package main

import (
	"fmt"
	"log"
	"net/http"
	"sort"

	"golang.org/x/net/websocket"
)

func main() {
	release := make(chan struct{}, 16)
	http.Handle("/echo", websocket.Handler(func(ws *websocket.Conn) {
		for {
			var msg string
			if websocket.Message.Receive(ws, &msg) != nil || websocket.Message.Send(ws, msg) != nil {
				return
			}
		}
	}))
	http.HandleFunc("/stream", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "first")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		fmt.Fprintln(w, "second")
	})
	http.HandleFunc("/release", func(w http.ResponseWriter, r *http.Request) {
		release <- struct{}{}
		fmt.Fprintln(w, "released")
	})
	http.HandleFunc("/headers", func(w http.ResponseWriter, r *http.Request) {
		var lines []string
		for k, v := range r.Header {
			lines = append(lines, fmt.Sprintf("%s: %v", k, v))
		}
		sort.Strings(lines)
		for _, l := range lines {
			fmt.Fprintln(w, l)
		}
		fmt.Fprintf(w, "Host: %s\nQuery: %s\n", r.Host, r.URL.RawQuery)
	})
	log.Fatal(http.ListenAndServe(":8081", nil))
}
