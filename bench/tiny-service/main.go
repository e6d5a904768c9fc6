// A tiny HTTP service for bench/deploy-scale.ts: 200 of these fit on a small machine, where 200 JVMs
// would not. It answers 200 on every path, on the port the platform gives it in SERVER_PORT.
package main

import (
	"net/http"
	"os"
)

func main() {
	port := os.Getenv("SERVER_PORT")
	if port == "" {
		port = "8080"
	}
	http.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("ok\n"))
	})
	if err := http.ListenAndServe(":"+port, nil); err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(1)
	}
}
