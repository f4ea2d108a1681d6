package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/teams"
	"github.com/askbridge/askbridge/adapters/teams/faketeams"
	"github.com/askbridge/askbridge/app"
	"github.com/askbridge/askbridge/domain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTeamsThroughTheBridge: with Teams configured, /teams/messages is
// served by the whole bridge — reachable under any Host a tunnel gives it
// (no token configured), 401 without a Bot Framework token — and a route
// naming a channel as Teams shows it, learned from the install, posts a
// card that a signed click answers.
func TestTeamsThroughTheBridge(t *testing.T) {
	f := faketeams.New(t)
	a, err := app.New(context.Background(), app.Settings{Addr: "127.0.0.1:0", PublicURL: "https://bridge.example",
		Teams: teams.Config{AppID: f.AppID, AppSecret: f.AppSecret, TenantID: f.Tenant, OpenIDMetadataURL: f.MetadataURL(),
			TokenURL: f.TokenURL(), ServiceURL: f.ServiceURL(), ServiceURLAllow: []string{"http://" + f.Host()}},
		Routes: []domain.Route{{Name: "oncall", Timeout: time.Hour,
			Targets: []domain.Target{{Platform: teams.Platform, Channel: "Platform/Deployments"}}}},
	})
	require.NoError(t, err)
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(func() {
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = a.Close(ctx)
	})
	endpoint := srv.URL + "/teams/messages"

	req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(`{"type":"message"}`))
	req.Host = "abc123.tunnel.example"
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "an unsigned activity under a tunnel's Host")

	f.Install(endpoint, "19:team0001@thread.tacv2", "Platform", "19:deploys0001@thread.tacv2", "Deployments")
	res, err := a.Router().Ask(context.Background(), "ops", &domain.AskRequest{RunID: "run-1", AgentID: "deploy-bot",
		Question: "Deploy?", Options: []domain.Option{{Label: "Yes"}, {Label: "No"}}, Route: "oncall"}, "")
	require.NoError(t, err)
	q := res.Question
	require.Len(t, q.Targets, 1)
	require.Empty(t, q.Targets[0].Error)
	posted := f.Activity(q.Targets[0].MessageTS)
	require.NotNil(t, posted)
	assert.Equal(t, "19:deploys0001@thread.tacv2", posted.Conversation)

	// The card's "Yes" button, pressed.
	var verb string
	var data json.RawMessage
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if x["type"] == "Action.Execute" && x["title"] == "Yes" {
				verb, _ = x["verb"].(string)
				data, _ = json.Marshal(x["data"])
			}
			for _, c := range x {
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	var all any
	require.NoError(t, json.Unmarshal(posted.Card(), &all))
	walk(all)
	require.NotEmpty(t, verb, "the card has a Yes button")
	r := f.Invoke(endpoint, faketeams.User{AADObjectID: "aad-alice", Name: "Alice Example"}, posted.ID, verb, data)
	assert.Equal(t, http.StatusOK, r.HTTPStatus)
	got, err := a.Router().Question(context.Background(), "ops", q.ID)
	require.NoError(t, err)
	assert.Equal(t, domain.StatusAnswered, got.Status)
	assert.Equal(t, "teams:aad-alice", got.RespondedBy.Key())
}
