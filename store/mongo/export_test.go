package mongo

import (
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
)

// What the external tests reach inside a Store, to stage what a crash
// between two writes leaves.

// SetClock replaces s's clock.
func SetClock(s *Store, now func() time.Time) { s.now = now }

// Collection returns s's collection name.
func Collection(s *Store, name string) *mongo.Collection { return s.db.Collection(name) }

// ClaimGrace is how long a claim whose job is missing is left alone.
func ClaimGrace(s *Store) time.Duration { return time.Duration(s.claimGrace()) * time.Millisecond }

// OnPruneJobsChecked makes s call fn in each job retention pass between
// its check for live runs and its delete.
func OnPruneJobsChecked(s *Store, fn func()) { s.pruneJobsChecked = fn }
