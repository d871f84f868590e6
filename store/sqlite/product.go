package sqlite

import "cronsheet/store"

// The SQLite driver serves the whole product.
var _ store.Product = (*Store)(nil)
