package main

import (
	"encoding/json"
	"net"
	"net/http"
	"time"
)

// floorCase measures the HTTP floor of the single case: the same clients
// send the same one-job requests, but to a bare net/http handler in this
// process that decodes each body and answers 201 with an id, storing
// nothing (no gin, no auth, no validation, no store). Its rate bounds what
// one job per request can reach on this machine with the clients on the
// same cores, whatever the store does.
func floorCase(o options, n int) (intakeResult, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return intakeResult{}, err
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(floorHandler)}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	base := "http://" + ln.Addr().String()
	took, err := postSingles(o, base, base+"/hook", n)
	if err != nil {
		return intakeResult{}, err
	}
	return intakeResult{name: "HTTP floor: bare net/http, nothing stored", n: n, clients: o.clients, perRequest: 1,
		took: took, stored: "n/a: not a node"}, nil
}

// floorHandler decodes a job's JSON and answers as the jobs API does, with
// a fixed id.
func floorHandler(w http.ResponseWriter, r *http.Request) {
	var job struct {
		Method string `json:"method"`
		Name   string `json:"name"`
		Params string `json:"params"`
		At     string `json:"at"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&job); err != nil || job.Name == "" {
		http.Error(w, "bad job", http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(map[string]string{"id": "0000000000floor00000", "state": "pending", "at": job.At})
}
