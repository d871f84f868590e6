// Package executors delivers one attempt of a run over a channel: email
// (gomail builds the message, go-smtp carries it), SMS (twilio-go), the
// outbox, and the target kinds http (callbacks behind a HostGuard), exec
// (allow-listed commands, argv without a shell, the process group killed
// at the deadline) and kafka (franz-go). A Registry maps each task.Channel
// to its Executor. Builtin targets live in package builtin; package
// executors/configured builds the executors from cronsheet's configuration.
//
// Failures are classified with task.Permanent (never retry: a bad address, an
// SMTP 5xx reply, an HTTP 4xx) and task.RetryAfter (HTTP 408/429 and 5xx
// with Retry-After); any other error is retryable with backoff.
//
// It imports only task among the project's packages; it must not import
// store, patrol, mapping, webtable, the api/ packages or server.
package executors
