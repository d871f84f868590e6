// Package benchkit holds what the benchmark programs share: latency
// distributions and their formatting, running work on a few goroutines,
// waiting for a count, progress lines on stderr, and the process's heap,
// CPU time and CPU profiles.
package benchkit
