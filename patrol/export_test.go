package patrol

// SetPassHook makes r call f after each pass, so tests can wait for a pass
// instead of sleeping.
func SetPassHook(r *Runner, f func()) { r.passed = f }
