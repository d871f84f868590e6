package store

import (
	"fmt"
	"strings"
)

// Product is everything the cronsheet server needs of a store: the core
// Store (rows, tasks, the ledger, the outbox, targets and run queries,
// jobs), the web table (RowTable), the row audit trail (AuditLog),
// export/import (Dumper, FlowDumper), the health check (Prober), the
// cluster-wide concurrency-group slots (CCSlots), the status charts'
// figures (RunStats), users and credentials (Users), task flows (Flows),
// the tasks using a target (TargetUsers), the live settings
// (SettingsStore), pruning by age and count (Retention) and the targets'
// health (TargetHealthBook). Both drivers implement all of it; the server
// refuses to start on a store that does not (see
// AsProduct).
type Product interface {
	Store
	RowTable
	AuditLog
	Dumper
	FlowDumper
	Prober
	CCSlots
	RunStats
	Users
	Flows
	TargetUsers
	SettingsStore
	Retention
	TargetHealthBook
}

// AsProduct returns st as a Product, or an error naming each interface it
// lacks, so that a store which cannot serve the whole product is refused
// at start rather than answering 501 later.
func AsProduct(st Store) (Product, error) {
	if p, ok := st.(Product); ok {
		return p, nil
	}
	var missing []string
	if _, ok := st.(RowTable); !ok {
		missing = append(missing, "RowTable (the web table and CSV export)")
	}
	if _, ok := st.(AuditLog); !ok {
		missing = append(missing, "AuditLog (the row audit trail)")
	}
	if _, ok := st.(Dumper); !ok {
		missing = append(missing, "Dumper (export and import)")
	}
	if _, ok := st.(FlowDumper); !ok {
		missing = append(missing, "FlowDumper (export and import of flows)")
	}
	if _, ok := st.(Prober); !ok {
		missing = append(missing, "Prober (the health check)")
	}
	if _, ok := st.(CCSlots); !ok {
		missing = append(missing, "CCSlots (cluster-wide concurrency groups)")
	}
	if _, ok := st.(RunStats); !ok {
		missing = append(missing, "RunStats (the status charts and outcome strips)")
	}
	if _, ok := st.(Users); !ok {
		missing = append(missing, "Users (users and credentials)")
	}
	if _, ok := st.(Flows); !ok {
		missing = append(missing, "Flows (task flows)")
	}
	if _, ok := st.(TargetUsers); !ok {
		missing = append(missing, "TargetUsers (which tasks use a target)")
	}
	if _, ok := st.(SettingsStore); !ok {
		missing = append(missing, "SettingsStore (the live settings)")
	}
	if _, ok := st.(Retention); !ok {
		missing = append(missing, "Retention (pruning by age and count)")
	}
	if _, ok := st.(TargetHealthBook); !ok {
		missing = append(missing, "TargetHealthBook (the targets' health)")
	}
	return nil, fmt.Errorf("store %T cannot serve cronsheet: it lacks %s", st, strings.Join(missing, ", "))
}
