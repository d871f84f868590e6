package sqlite

import "context"

// ExecRaw runs q on s's writer connection, outside every store method:
// the tests' stand-in for another tool editing the database.
func ExecRaw(ctx context.Context, s *Store, q string, args ...any) error {
	_, err := s.w.ExecContext(ctx, q, args...)
	return err
}
