package discord

import "testing"

func TestBucketPath(t *testing.T) {
	for in, want := range map[string]string{
		"/api/v10/channels/1000/messages":                  "/api/v10/channels/1000/messages",
		"/api/v10/channels/1000/messages/1234567890123456": "/api/v10/channels/1000/messages/{id}",
		"/api/v10/guilds/42/members/99":                    "/api/v10/guilds/42/members/{id}",
		"/api/v10/webhooks/77/tok-en/messages/@original":   "/api/v10/webhooks/77/tok-en/messages/@original",
		"/api/v10/interactions/555/tok/callback":           "/api/v10/interactions/{id}/tok/callback",
	} {
		if got := bucketPath(in); got != want {
			t.Errorf("bucketPath(%q) = %q, want %q", in, got, want)
		}
	}
}
