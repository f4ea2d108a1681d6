package teams

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"image/png"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const testAppID = "2f1c8e4a-51d7-4b6e-9c1d-5a7e3f0a9b21"

// unzip returns the files of a package by name.
func unzip(t *testing.T, b []byte) map[string][]byte {
	t.Helper()
	z, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	require.NoError(t, err)
	out := map[string][]byte{}
	for _, f := range z.File {
		r, err := f.Open()
		require.NoError(t, err)
		data, err := io.ReadAll(r)
		require.NoError(t, err)
		require.NoError(t, r.Close())
		out[f.Name] = data
	}
	return out
}

// TestAppPackageMatchesTheManifestSchema: the package holds manifest.json
// and the two icons at its top; the manifest matches the Teams app
// manifest schema of its version and names the bot by the app id.
func TestAppPackageMatchesTheManifestSchema(t *testing.T) {
	s := compileSchema(t, "testdata/teams-manifest/MicrosoftTeams.v"+ManifestVersion+".schema.json",
		"https://developer.microsoft.com/en-us/json-schemas/teams/v"+ManifestVersion+"/MicrosoftTeams.schema.json")
	p := Package{AppID: testAppID, PublicURL: "https://bridge.example.com/"}
	b, err := p.Zip()
	require.NoError(t, err)
	files := unzip(t, b)
	require.Len(t, files, 3)
	if err := schemaProblem(t, s, files["manifest.json"]); err != nil {
		t.Fatalf("manifest.json does not match the Teams manifest %s schema: %v", ManifestVersion, err)
	}
	var m struct {
		ManifestVersion string `json:"manifestVersion"`
		ID              string `json:"id"`
		Bots            []struct {
			BotID  string   `json:"botId"`
			Scopes []string `json:"scopes"`
		} `json:"bots"`
		ValidDomains []string `json:"validDomains"`
	}
	require.NoError(t, json.Unmarshal(files["manifest.json"], &m))
	assert.Equal(t, ManifestVersion, m.ManifestVersion)
	require.Len(t, m.Bots, 1)
	assert.Equal(t, testAppID, m.Bots[0].BotID)
	assert.Contains(t, m.Bots[0].Scopes, "team", "the bot can be added to a team's channels")
	assert.Equal(t, []string{"bridge.example.com"}, m.ValidDomains)
	assert.Equal(t, "https://bridge.example.com/teams/messages", p.MessagingEndpoint())

	// The check can fail: a manifest Teams would refuse is caught.
	bad := bytes.Replace(files["manifest.json"], []byte(`"botId": "`+testAppID+`"`), []byte(`"botId": "my-bot"`), 1)
	assert.Error(t, schemaProblem(t, s, bad))

	again, err := p.Zip()
	require.NoError(t, err)
	assert.Equal(t, b, again, "the same settings make the same package")
}

// TestAppIcons: the colour icon is 192×192 and opaque, the outline icon
// 32×32, white on transparent, as Teams requires.
func TestAppIcons(t *testing.T) {
	b, err := Package{AppID: testAppID, PublicURL: "https://bridge.example.com"}.Zip()
	require.NoError(t, err)
	files := unzip(t, b)

	c, err := png.Decode(bytes.NewReader(files["color.png"]))
	require.NoError(t, err)
	assert.Equal(t, 192, c.Bounds().Dx())
	assert.Equal(t, 192, c.Bounds().Dy())
	_, _, _, a := c.At(0, 0).RGBA()
	assert.Equal(t, uint32(0xffff), a, "the colour icon is opaque")

	o, err := png.Decode(bytes.NewReader(files["outline.png"]))
	require.NoError(t, err)
	assert.Equal(t, 32, o.Bounds().Dx())
	assert.Equal(t, 32, o.Bounds().Dy())
	white, clear := 0, 0
	for y := range 32 {
		for x := range 32 {
			r, g, bl, a := o.At(x, y).RGBA()
			switch {
			case a == 0:
				clear++
			case r == 0xffff && g == 0xffff && bl == 0xffff && a == 0xffff:
				white++
			default:
				t.Fatalf("outline pixel (%d,%d) is neither white nor transparent", x, y)
			}
		}
	}
	assert.Positive(t, white)
	assert.Positive(t, clear)
}

// TestAppPackageSettingsErrors: a missing or malformed app id or public
// URL is refused in words naming the setting and the fix.
func TestAppPackageSettingsErrors(t *testing.T) {
	for name, c := range map[string]struct {
		p    Package
		want string
	}{
		"no app id":      {Package{PublicURL: "https://b.example.com"}, "the Teams app id is missing: set it to the Microsoft App ID of your Azure Bot"},
		"app id no guid": {Package{AppID: "askbridge-bot", PublicURL: "https://b.example.com"}, `the Teams app id "askbridge-bot" is not a Microsoft App ID: it must be a GUID`},
		"no url":         {Package{AppID: testAppID}, "the public URL is missing: set it to the https address Teams reaches the bridge at"},
		"http url":       {Package{AppID: testAppID, PublicURL: "http://b.example.com"}, `the public URL "http://b.example.com" must be an https address`},
		"no host":        {Package{AppID: testAppID, PublicURL: "https://"}, `the public URL "https://" must be an https address`},
		"bad version":    {Package{AppID: testAppID, PublicURL: "https://b.example.com", Version: "2"}, `the app version "2" must be three numbers`},
	} {
		_, err := c.p.Zip()
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), c.want, name)
	}
}
