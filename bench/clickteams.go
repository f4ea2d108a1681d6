package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/askbridge/askbridge/adapters/teams"
	"github.com/askbridge/askbridge/adapters/teams/faketeams"
	"github.com/askbridge/askbridge/app"
	"github.com/askbridge/askbridge/domain"
)

// Teams' clicks come after Telegram's in (f)'s table.
func init() {
	for i, c := range clickSurfaces {
		if c.name == "Telegram" {
			clickSurfaces = append(clickSurfaces[:i+1], append([]clickSurface{teamsClicks()}, clickSurfaces[i+1:]...)...)
			return
		}
	}
	clickSurfaces = append(clickSurfaces, teamsClicks())
}

// teamsChannel is the team channel the bench's questions are posted in.
const teamsChannel = "19:benchclicks0001@thread.tacv2"

// teamsClicks: the adaptiveCard/action invoke of a press of the card's
// "Yes" (Action.Execute), with a Bot Framework token (RS256, from the
// fake's published key), as Teams sends it. The Bot Framework reuses one
// token for an hour, so the bench signs one before its first click:
// the sender's RSA signing is not in the timings.
func teamsClicks() clickSurface {
	var fake *faketeams.Server
	var token string
	alice := faketeams.User{AADObjectID: "aad-alice", Name: "Alice Example"}
	return clickSurface{
		name: "Teams",
		setup: func(s *app.Settings) (func(), error) {
			tb := &fakeTB{}
			fake = faketeams.New(tb)
			fake.AddChannel(teamsChannel, "Deployments")
			s.Teams = teams.Config{AppID: fake.AppID, AppSecret: fake.AppSecret, TenantID: fake.Tenant,
				OpenIDMetadataURL: fake.MetadataURL(), TokenURL: fake.TokenURL(), ServiceURL: fake.ServiceURL(),
				ServiceURLAllow: []string{"http://" + fake.Host()}}
			return tb.close, nil
		},
		target: func(int) *domain.Target { return &domain.Target{Platform: teams.Platform, Channel: teamsChannel} },
		click: func(r *replica, q *domain.Question) (func() *http.Request, error) {
			if token == "" {
				token = fake.Token(faketeams.TokenOptions{})
			}
			var id string
			for _, t := range q.Targets {
				id = t.MessageTS
			}
			a := fake.Activity(id)
			if id == "" || a == nil {
				return nil, fmt.Errorf("question %s was not posted to Teams", q.ID)
			}
			var card any
			if err := json.Unmarshal(a.Card(), &card); err != nil {
				return nil, fmt.Errorf("the Teams copy of %s has no card: %w", q.ID, err)
			}
			verb, data := findExecute(card, "Yes")
			if verb == "" {
				return nil, fmt.Errorf("no Yes button on the Teams copy of %s", q.ID)
			}
			act := fake.InvokeActivity(alice, id, verb, data)
			act["id"], act["serviceUrl"], act["channelId"] = "f:"+q.ID, fake.ServiceURL(), "msteams"
			body, _ := json.Marshal(act)
			return func() *http.Request {
				req, _ := http.NewRequest(http.MethodPost, r.web.URL+"/teams/messages", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+token)
				return req
			}, nil
		},
	}
}

// findExecute returns the verb and data of the card's Action.Execute
// titled title.
func findExecute(v any, title string) (verb string, data json.RawMessage) {
	switch x := v.(type) {
	case map[string]any:
		if x["type"] == "Action.Execute" && x["title"] == title {
			verb, _ = x["verb"].(string)
			data, _ = json.Marshal(x["data"])
			return verb, data
		}
		for _, c := range x {
			if verb, data = findExecute(c, title); verb != "" {
				return verb, data
			}
		}
	case []any:
		for _, c := range x {
			if verb, data = findExecute(c, title); verb != "" {
				return verb, data
			}
		}
	}
	return "", nil
}
