package main

import (
	"archive/zip"
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// `askbridge teams manifest` writes the app package for the configured
// app id and public URL, and says what to do with it.
func TestTeamsManifestCommand(t *testing.T) {
	out := filepath.Join(t.TempDir(), "app.zip")
	env := map[string]string{"BRIDGE_PUBLIC_URL": "https://bridge.example.com"}
	id := "2f1c8e4a-51d7-4b6e-9c1d-5a7e3f0a9b21"
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"teams", "manifest", "--out", out, "--app-id", id}, func(k string) string { return env[k] }, nil, &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	assert.Contains(t, stdout.String(), "The Azure Bot's messaging endpoint must be https://bridge.example.com/teams/messages.")
	z, err := zip.OpenReader(out)
	require.NoError(t, err)
	defer z.Close()
	var names []string
	for _, f := range z.File {
		names = append(names, f.Name)
	}
	assert.ElementsMatch(t, []string{"manifest.json", "color.png", "outline.png"}, names)

	// Flags win over the environment.
	stdout.Reset()
	code = run(context.Background(), []string{"teams", "manifest", "--out", out, "--app-id", id, "--public-url", "https://other.example.com"}, func(k string) string { return env[k] }, nil, &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	assert.Contains(t, stdout.String(), "https://other.example.com/teams/messages")

	// Without --app-id the bridge's own setting is used: the package is for the bot it serves.
	stdout.Reset()
	env["TEAMS_APP_ID"] = id
	code = run(context.Background(), []string{"teams", "manifest", "--out", out}, func(k string) string { return env[k] }, nil, &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	assert.Contains(t, stdout.String(), "of bot "+id)
}

// A missing or malformed app id or URL is refused with what to set.
func TestTeamsManifestCommandErrors(t *testing.T) {
	out := filepath.Join(t.TempDir(), "app.zip")
	for name, c := range map[string]struct {
		args []string
		env  map[string]string
		want string
	}{
		"nothing set": {nil, nil, "the Teams app id is missing"},
		"no url": {[]string{"--app-id", "2f1c8e4a-51d7-4b6e-9c1d-5a7e3f0a9b21"}, nil,
			"the public URL is missing: set it to the https address Teams reaches the bridge at"},
		"bad app id": {[]string{"--app-id", "my-bot", "--public-url", "https://b.example.com"}, nil,
			`the Teams app id "my-bot" is not a Microsoft App ID: it must be a GUID`},
		"http url": {[]string{"--app-id", "2f1c8e4a-51d7-4b6e-9c1d-5a7e3f0a9b21", "--public-url", "http://b.example.com"}, nil,
			"Teams only calls bots over https"},
	} {
		var stdout, stderr bytes.Buffer
		args := append([]string{"teams", "manifest", "--out", out}, c.args...)
		code := run(context.Background(), args, func(k string) string { return c.env[k] }, nil, &stdout, &stderr)
		assert.Equal(t, 1, code, name)
		assert.Contains(t, stderr.String(), c.want, name)
		assert.Contains(t, stderr.String(), "(flag --app-id, TEAMS_APP_ID or teams.app_id; flag --public-url, BRIDGE_PUBLIC_URL or public_url)", name)
		assert.NoFileExists(t, out, name)
	}
	var stdout, stderr bytes.Buffer
	assert.Equal(t, 2, run(context.Background(), []string{"teams"}, func(string) string { return "" }, nil, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "usage: askbridge teams manifest")
	assert.Equal(t, 0, run(context.Background(), []string{"teams", "manifest", "--help"}, func(string) string { return "" }, nil, &stdout, &stderr))
	assert.Contains(t, stdout.String(), "--app-version")
}
