package domain

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRespondersReadAndWriteTheirJSONFields: the wire form keeps one field
// per kind of group, as API callers and stored records have it, though
// the domain names no platform.
func TestRespondersReadAndWriteTheirJSONFields(t *testing.T) {
	in := `{"users":["slack:U1"],"slack_usergroups":["S1"],"discord_roles":["667788"],"exclude_requester":true}`
	var r Responders
	require.NoError(t, json.Unmarshal([]byte(in), &r))
	assert.Equal(t, []string{"slack:U1"}, r.Users)
	assert.Equal(t, []string{"S1"}, r.Group("slack_usergroups"))
	assert.Equal(t, []string{"667788"}, r.Group("discord_roles"))
	assert.True(t, r.ExcludeRequester)
	out, err := json.Marshal(r)
	require.NoError(t, err)
	assert.JSONEq(t, in, string(out))

	empty, err := json.Marshal(Responders{})
	require.NoError(t, err)
	assert.Equal(t, "{}", string(empty))
	q, err := json.Marshal(struct {
		R *Responders `json:"r,omitempty"`
	}{})
	require.NoError(t, err)
	assert.Equal(t, "{}", string(q), "a nil pointer is still left out")
}

func TestRespondersRefuseWhatIsNotAListOfIDs(t *testing.T) {
	for in, want := range map[string]string{
		`{"users":"slack:U1"}`:              `users: must be a list of "<platform>:<id>" strings`,
		`{"slack_usergroups":"S1"}`:         "slack_usergroups: must be a list of ids",
		`{"exclude_requester":"yes"}`:       "exclude_requester: must be true or false",
		`["slack:U1"]`:                      "must be an object",
		`{"discord_roles":[1],"users":[2]}`: `discord_roles: must be a list of ids; users: must be a list of "<platform>:<id>" strings`,
	} {
		var r Responders
		err := json.Unmarshal([]byte(in), &r)
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), want, in)
	}
}

// TestAnUnknownKindOfGroupIsRefusedAtAskTime: a kind no surface registered
// (a typo, a platform not built in) is named with the kinds there are.
func TestAnUnknownKindOfGroupIsRefusedAtAskTime(t *testing.T) {
	r := Responders{Groups: map[string][]string{"slack_usergroup": {"S1"}}}
	_, _, err := BuildQuestion(&AskRequest{Question: "Go?", Responders: &r}, AskDefaults{Timeout: DefaultTimeout}, false)
	require.Error(t, err)
	var e *Error
	require.ErrorAs(t, err, &e)
	require.Len(t, e.Details, 1)
	assert.Equal(t, "responders.slack_usergroup", e.Details[0].Field)
	assert.Contains(t, e.Details[0].Problem, "discord_roles, slack_usergroups")
}

// TestGroupsMatchOnlyThePlatformThatRegisteredTheirKind: a Discord role id
// that equals a Slack user group id admits nobody on Slack.
func TestGroupsMatchOnlyThePlatformThatRegisteredTheirKind(t *testing.T) {
	r := Responders{Groups: map[string][]string{"discord_roles": {"G1"}}}
	assert.False(t, Allowed(r, Person{Platform: "slack", ID: "U1", Groups: []string{"G1"}}))
	assert.True(t, Allowed(r, Person{Platform: "discord", ID: "4", Groups: []string{"G1"}}))
	merged := r.Merge(Responders{Groups: map[string][]string{"slack_usergroups": {"S1"}, "discord_roles": {"G1", "G2"}}})
	assert.Equal(t, []string{"G1", "G2"}, merged.Group("discord_roles"))
	assert.Equal(t, []string{"S1"}, merged.Group("slack_usergroups"))
	assert.Equal(t, []string{"G1"}, r.Group("discord_roles"), "Merge leaves the original alone")
	assert.Equal(t, "Discord role G1, Discord role G2, Slack user group S1", DescribeResponders(merged))
}
