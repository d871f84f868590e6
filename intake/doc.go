// Package intake takes job submissions over channels other than the HTTP
// API: a WebSocket (submit, and receive each job's result when it is
// final) and a Kafka intake topic (answers and results on a result
// topic).
//
// Every channel decodes a submission with jobs.ParseRequest and submits it
// with Submit (which builds it with jobs.Build), the one validation path
// the HTTP API uses too, so the same body is accepted or refused the same
// way everywhere and a refusal carries the same {"error", "field"}.
//
// A submission that asks to wait ("wait" > 0) is refused on these channels
// (field "wait"): they send the result when the job is final instead.
//
// intake depends on jobs and task only; it must not import webtable, the
// api/ packages, server or the store drivers.
package intake
