package mongo

import "cronsheet/store"

// The MongoDB driver serves the whole product. It has no
// store.RunFinisher: its promise that a failed batch stored nothing needs
// a multi-document transaction (none on a standalone server or FerretDB),
// so fire finishes runs one by one on it, with the same outcome per run.
var _ store.Product = (*Store)(nil)
