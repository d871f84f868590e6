// Package depcheck holds the test that keeps the import arrows of
// docs/DESIGN.md ("Layout"): it reads `go list -deps` for each package and
// fails on a dependency the design forbids. It has no code outside tests.
package depcheck
