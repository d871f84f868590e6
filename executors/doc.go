// Package executors delivers one attempt of a run over a channel: email
// (gomail), SMS (twilio-go) and the outbox. Failures are classified with
// task.Permanent and task.RetryAfter; any other error is retryable.
package executors
