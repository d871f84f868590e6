package mongo

import "cronsheet/store"

// The MongoDB driver serves the whole product.
var _ store.Product = (*Store)(nil)
