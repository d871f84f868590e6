// Package executors delivers one attempt of a run over a channel: email
// (gomail builds the message, go-smtp carries it), SMS (twilio-go) and the
// outbox. A Registry maps each task.Channel to its Executor.
//
// Failures are classified with task.Permanent (never retry: a bad address, an
// SMTP 5xx reply, an HTTP 4xx) and task.RetryAfter (HTTP 429); any other error
// is retryable with backoff.
//
// It imports only task among the project's packages; it must not import
// store, patrol, mapping, webtable or server.
package executors
