package task

import (
	"strings"
	"testing"
)

// TestRestoreSecretsRefusesAMovedDestination: masks
// sent back with a URL whose scheme, host or port changed are refused,
// naming each masked place; a move of the path, or a port written out
// where it was the scheme's default, keeps the stored secrets.
func TestRestoreSecretsRefusesAMovedDestination(t *testing.T) {
	t.Parallel()
	const stored = "https://bob:pw@hooks.example.com/h?key=k&day=mon"
	old := &Target{HTTP: &HTTPTarget{URL: stored, Headers: map[string]string{"Authorization": "Bearer t", "X-Api-Key": "a"}}}
	tests := []struct {
		name, url string
		moved     bool
	}{
		{"same", "https://bob:***@hooks.example.com/h?key=***&day=mon", false},
		{"other path", "https://bob:***@hooks.example.com/other?key=***", false},
		{"default port written out, host in capitals", "https://bob:***@HOOKS.example.com:443/h?key=***", false},
		{"other host", "https://bob:***@evil.example.com/h?key=***", true},
		{"other port", "https://bob:***@hooks.example.com:8443/h?key=***", true},
		{"other scheme", "http://bob:***@hooks.example.com/h?key=***", true},
		{"host in a template", "https://bob:***@{{host}}/h?key=***", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			nt := &Target{HTTP: &HTTPTarget{URL: tt.url, Headers: map[string]string{"Authorization": SecretMask, "X-Api-Key": SecretMask}}}
			err := nt.RestoreSecrets(old)
			if !tt.moved {
				if err != nil || strings.Contains(nt.HTTP.URL, SecretMask) || nt.HTTP.Headers["Authorization"] != "Bearer t" {
					t.Errorf("restore: %v, %+v", err, nt.HTTP)
				}
				return
			}
			if err == nil {
				t.Fatalf("restored %+v, want a refusal", nt.HTTP)
			}
			for _, want := range []string{"http.url: ", "http.url (the password)", `http.url (query parameter "key")`,
				"http.headers.Authorization", "http.headers.X-Api-Key"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name %s", err, want)
				}
			}
		})
	}
	// A header mask alone, moved: the field is http.headers.
	nt := &Target{HTTP: &HTTPTarget{URL: "https://evil.example.com/", Headers: map[string]string{"X-Api-Key": SecretMask}}}
	if err := nt.RestoreSecrets(old); err == nil || !strings.HasPrefix(err.Error(), "http.headers: ") {
		t.Errorf("a moved header mask: %v, want a refusal naming http.headers", err)
	}
}
