// Package declared makes the rows, targets and flows a YAML file declares
// exist as written (cronsheet apply, and config key declared at start).
//
// It is a client of the REST API: every change goes through the same
// handlers as any other caller's (validation, audit, If-Match, write-only
// secrets), whether over the network (cronsheet apply --server) or in the
// node's own process at start. It depends on the model (task), the row
// field names (mapping) and YAML; never on the server, a store, the engine
// or Gin.
//
// Objects apply makes carry a marker naming the file's set (the file's
// name key): rows the field managed_by, targets and flows the label
// managed_by. Only objects with this file's marker are ever pruned.
// Target secrets read back as *** over the API, so a target's label
// declared_secrets holds a bcrypt hash of its secret parts as the file
// last set them: the same secrets compare unchanged, other ones are
// sent again ("secrets" among the changed fields, values never shown).
package declared
