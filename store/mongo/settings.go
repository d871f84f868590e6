package mongo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"cronsheet/store"
	"cronsheet/task"
)

var _ store.SettingsStore = (*Store)(nil)

// collSettings holds the live settings (store.SettingsStore): one document
// per version, _id the version. A new version is an insert of _id = the
// version it replaces plus 1, so the duplicate key on _id is the gate
// between two writers that read the same version: it holds across
// processes on FerretDB too, where a conditional update would not. Older
// versions are deleted after a write; a reader takes the highest _id.
const collSettings = "settings"

// settingsDoc is one document of collSettings; Body is the settings as
// JSON.
type settingsDoc struct {
	Version   int64  `bson:"_id"`
	Body      string `bson:"body"`
	UpdatedAt int64  `bson:"updated_at"`
	UpdatedBy string `bson:"updated_by"`
}

func (s *Store) settings() *collection { return s.colls.get(collSettings) }

// GetSettings returns the newest stored settings, see store.SettingsStore.
func (s *Store) GetSettings(ctx context.Context) (*store.Settings, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	var d settingsDoc
	err := s.settings().FindOne(ctx, bson.D{}, options.FindOne().SetSort(bson.D{{Key: "_id", Value: -1}})).Decode(&d)
	if err != nil {
		return nil, fmt.Errorf("get settings: %w", translate(err))
	}
	var out store.Settings
	if err := json.Unmarshal([]byte(d.Body), &out); err != nil {
		return nil, fmt.Errorf("get settings: stored body: %w", err)
	}
	out.Version, out.UpdatedAt, out.UpdatedBy = d.Version, store.FromUnixMS(d.UpdatedAt), d.UpdatedBy
	return out.Normalized(), nil
}

// PutSettings stores a new version, see store.SettingsStore.
func (s *Store) PutSettings(ctx context.Context, set *store.Settings, ifVersion int64) (*store.Settings, error) {
	cur, err := s.GetSettings(ctx)
	switch {
	case errors.Is(err, task.ErrNotFound):
		if ifVersion > 0 {
			return nil, fmt.Errorf("put settings: none are stored to replace: %w", task.ErrNotFound)
		}
	case err != nil:
		return nil, fmt.Errorf("put settings: %w", err)
	case cur.Version != ifVersion:
		return nil, fmt.Errorf("put settings: %w", store.SettingsVersionError(ifVersion, cur.Version))
	}
	n := set.Normalized()
	n.Version, n.UpdatedAt = 0, s.now()
	body, err := json.Marshal(n)
	if err != nil {
		return nil, fmt.Errorf("put settings: %w", err)
	}
	d := settingsDoc{Version: ifVersion + 1, Body: string(body), UpdatedAt: store.UnixMS(n.UpdatedAt), UpdatedBy: n.UpdatedBy}
	cctx, cancel := s.call(ctx)
	defer cancel()
	if _, err := s.settings().InsertOne(cctx, d); err != nil {
		if isDuplicate(err) {
			return nil, fmt.Errorf("put settings: %w", store.SettingsVersionError(ifVersion, ifVersion+1))
		}
		return nil, fmt.Errorf("put settings: %w", translate(err))
	}
	// The older versions are no longer read; a failure here leaves them
	// for the next write.
	_, _ = s.settings().DeleteMany(cctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$lt", Value: d.Version}}}})
	return s.GetSettings(ctx)
}
