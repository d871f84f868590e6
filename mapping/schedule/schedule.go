// Package schedule parses cronsheet's schedule language (cron_para) into a
// Schedule with one canonical text, and computes its fire instants.
//
// API CONTRACT (filled in by the implementer; keep these signatures):
//
//	func Parse(text, defaultTZ string) (*Schedule, error)
//	func (s *Schedule) String() string          // canonical text
//	func (s *Schedule) Location() *time.Location
//	func (s *Schedule) IsOnce() bool            // "at" and "in" forms
//	func (s *Schedule) Next(after, anchor time.Time) time.Time
//	func (s *Schedule) NextN(after, anchor time.Time, n int) []time.Time
//
// Parse errors are *ParseError values.
package schedule
