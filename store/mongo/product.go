package mongo

import "cronsheet/store"

// The MongoDB driver serves the whole product. It has no
// store.RunFinisher: its promise that a failed batch stored nothing needs
// a multi-document transaction (none on a standalone server or FerretDB),
// so its finished runs are written one by one, with the same outcome per
// run (also in store.RunWriter's WriteRuns, which it has).
var _ store.Product = (*Store)(nil)
