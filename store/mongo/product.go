package mongo

import "cronsheet/store"

// The MongoDB driver serves the whole product. Of the SQLite driver's
// optional batch interfaces it has neither store.JobBatcher nor
// store.RunFinisher: both promise that a failed batch stored nothing, which
// needs a multi-document transaction (none on a standalone server or
// FerretDB). Their callers (jobs, fire) then store item by item, with the
// same outcome per item.
var _ store.Product = (*Store)(nil)
