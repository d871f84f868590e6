package declared

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"

	"golang.org/x/crypto/bcrypt"

	"cronsheet/task"
)

func planTargets(ctx context.Context, c *Client, f *File, prune bool) (changes, deletes []Change, err error) {
	have, err := byID(c.list(ctx, "/api/v1/targets", "targets"))
	if err != nil {
		return nil, nil, fmt.Errorf("read targets: %w", err)
	}
	for _, d := range f.Targets {
		cur, ok := have[d.ID]
		delete(have, d.ID)
		ch, err := planTarget(d, cur, ok, f.Name)
		if err != nil {
			return nil, nil, fmt.Errorf("target %s: %w", d.ID, err)
		}
		changes = append(changes, ch)
	}
	if prune {
		for _, id := range sortedKeys(have) {
			if marked(have[id], f.Name) {
				deletes = append(deletes, deleteChange(KindTarget, "", id, "/api/v1/targets/"+url.PathEscape(id), versionOf(have[id])))
			}
		}
	}
	return changes, deletes, nil
}

// planTarget compares declared target d with cur, the node's (redacted)
// answer, when ok. Secrets are compared through cur's SecretsLabel.
func planTarget(d *TargetDecl, cur object, ok bool, set string) (Change, error) {
	want := maps.Clone(d.Body)
	if want["state"] == nil {
		want["state"] = string(task.TargetPreset) // the API's default
	}
	labels := withMarker(want["labels"], set)
	want["labels"] = labels
	t, err := asTarget(want)
	if err != nil {
		return Change{}, err
	}
	material, hasSecrets, err := secretMaterial(t)
	if err != nil {
		return Change{}, err
	}
	if !ok {
		if hasSecrets {
			if labels[SecretsLabel], err = hashSecrets(material); err != nil {
				return Change{}, err
			}
		}
		return Change{Kind: KindTarget, ID: d.ID, Action: Create, method: http.MethodPost, path: "/api/v1/targets", body: want}, nil
	}
	stored := storedHash(cur)
	redacted, err := normalize(t.Redacted())
	if err != nil {
		return Change{}, err
	}
	curCmp := maps.Clone(cur)
	curCmp["labels"] = withoutSecretsLabel(cur["labels"])
	fields, err := diffObjects[task.Target](redacted, curCmp)
	if err != nil {
		return Change{}, err
	}
	switch {
	case hasSecrets && stored != "" && bcrypt.CompareHashAndPassword([]byte(stored), []byte(material)) == nil:
		labels[SecretsLabel] = stored
	case hasSecrets:
		if labels[SecretsLabel], err = hashSecrets(material); err != nil {
			return Change{}, err
		}
		fields = append(fields, "secrets")
	case stored != "":
		fields = append(fields, "secrets")
	}
	return updateOrNot(Change{Kind: KindTarget, ID: d.ID, method: http.MethodPut,
		path: "/api/v1/targets/" + url.PathEscape(d.ID), ifMatch: versionOf(cur), body: want}, fields), nil
}

// asTarget reads a target body.
func asTarget(body map[string]any) (*task.Target, error) {
	data, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	var t task.Target
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// secretMaterial returns the text of t's secret parts (its URL and header
// values), and whether it has any (its redacted form differs).
func secretMaterial(t *task.Target) (string, bool, error) {
	plain, err := json.Marshal(t)
	if err != nil {
		return "", false, err
	}
	red, err := json.Marshal(t.Redacted())
	if err != nil {
		return "", false, err
	}
	if string(plain) == string(red) || t.HTTP == nil {
		return "", false, nil
	}
	sum := sha256.New()
	sum.Write([]byte(t.HTTP.URL))
	for _, k := range slices.Sorted(maps.Keys(t.HTTP.Headers)) {
		fmt.Fprintf(sum, "\x00%s\x00%s", k, t.HTTP.Headers[k])
	}
	// bcrypt reads at most 72 bytes: it hashes the digest, not the secrets.
	return hex.EncodeToString(sum.Sum(nil)), true, nil
}

// hashSecrets returns the salted, slow hash of material kept in the
// SecretsLabel: readers of the target see it, so it must not give the
// secrets away to guessing.
func hashSecrets(material string) (string, error) {
	h, err := bcrypt.GenerateFromPassword([]byte(material), bcrypt.DefaultCost)
	if err != nil {
		return "", fmt.Errorf("hash the target's secrets: %w", err)
	}
	return string(h), nil
}

// storedHash is cur's SecretsLabel, "" when none.
func storedHash(cur object) string {
	labels, _ := cur["labels"].(map[string]any)
	s, _ := labels[SecretsLabel].(string)
	return s
}

// withoutSecretsLabel returns labels without SecretsLabel.
func withoutSecretsLabel(labels any) map[string]any {
	out := map[string]any{}
	if m, ok := labels.(map[string]any); ok {
		maps.Copy(out, m)
	}
	delete(out, SecretsLabel)
	return out
}
