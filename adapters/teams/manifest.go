package teams

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// The Teams app package: what a person uploads to Teams so its people can
// add the bot to a team or a chat. It is a zip of manifest.json (the app
// manifest, schema version ManifestVersion) and two icons.

// ManifestVersion is the Teams app manifest schema version the package
// uses.
const ManifestVersion = "1.19"

// Icon sizes Teams requires (manifest icons: color 192×192, outline 32×32
// white on transparent).
const (
	colorIconSize   = 192
	outlineIconSize = 32
)

// Package is what the app package is made of.
type Package struct {
	// AppID is the bot's Microsoft App ID (the Azure Bot's), a GUID; the
	// package uses it as the app's id too.
	AppID string
	// PublicURL is the https address Teams reaches the bridge at.
	PublicURL string
	// Name is the app's short name in Teams (default "askbridge").
	Name string
	// Version is the package's version, x.y.z (default "1.0.0"); raise it
	// to update an uploaded app.
	Version string
}

var (
	guidPattern   = regexp.MustCompile(`^[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$`)
	semverPattern = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`)
)

// Check says what is wrong with p, in words naming the setting and the
// fix; nil when a package can be made.
func (p Package) Check() error {
	var problems []string
	switch id := strings.TrimSpace(p.AppID); {
	case id == "":
		problems = append(problems, "the Teams app id is missing: set it to the Microsoft App ID of your Azure Bot (Azure portal → the bot → Configuration), a GUID like 2f1c8e4a-0000-4b6e-9c1d-5a7e3f000000")
	case !guidPattern.MatchString(id):
		problems = append(problems, fmt.Sprintf("the Teams app id %q is not a Microsoft App ID: it must be a GUID like 2f1c8e4a-0000-4b6e-9c1d-5a7e3f000000 (Azure portal → the bot → Configuration)", clipped(id)))
	}
	u, err := url.Parse(strings.TrimSpace(p.PublicURL))
	switch {
	case strings.TrimSpace(p.PublicURL) == "":
		problems = append(problems, "the public URL is missing: set it to the https address Teams reaches the bridge at, e.g. https://bridge.example.com")
	case err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "":
		problems = append(problems, fmt.Sprintf("the public URL %q must be an https address without user, query or fragment, e.g. https://bridge.example.com: Teams only calls bots over https", clipped(p.PublicURL)))
	}
	if p.Version != "" && !semverPattern.MatchString(p.Version) {
		problems = append(problems, fmt.Sprintf("the app version %q must be three numbers, e.g. 1.0.1", clipped(p.Version)))
	}
	if n := len([]rune(p.Name)); n > 30 {
		problems = append(problems, fmt.Sprintf("the app name has %d characters; Teams takes at most 30", n))
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return nil
}

func clipped(s string) string { c, _ := clip(s, 80); return c }

// MessagingEndpoint is the address to give the Azure Bot as its messaging
// endpoint.
func (p Package) MessagingEndpoint() string {
	return strings.TrimRight(strings.TrimSpace(p.PublicURL), "/") + "/teams/messages"
}

// Manifest is the package's manifest.json.
func (p Package) Manifest() ([]byte, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	id := strings.ToLower(strings.TrimSpace(p.AppID))
	base := strings.TrimRight(strings.TrimSpace(p.PublicURL), "/")
	u, _ := url.Parse(base)
	name := p.Name
	if name == "" {
		name = "askbridge"
	}
	version := p.Version
	if version == "" {
		version = "1.0.0"
	}
	m := map[string]any{
		"$schema":         "https://developer.microsoft.com/en-us/json-schemas/teams/v" + ManifestVersion + "/MicrosoftTeams.schema.json",
		"manifestVersion": ManifestVersion,
		"version":         version,
		"id":              id,
		"developer": map[string]any{
			"name":          "askbridge",
			"websiteUrl":    base + "/",
			"privacyUrl":    base + "/",
			"termsOfUseUrl": base + "/",
		},
		"name": map[string]any{"short": name, "full": name + ": questions and approvals from AI agents"},
		"description": map[string]any{
			"short": "Answer the questions and approvals of your AI agents.",
			"full": "Your AI agents ask through askbridge when they need a person: a choice, some text, or an approval of the exact " +
				"command or edit they want to run. The bot posts each question as a card in the channel or chat a route names; " +
				"whoever may answer decides on the card, and the agent carries on.",
		},
		"icons":       map[string]any{"color": "color.png", "outline": "outline.png"},
		"accentColor": "#4F6BED",
		"bots": []any{map[string]any{
			"botId":              id,
			"scopes":             []string{"team", "groupChat", "personal"},
			"isNotificationOnly": false,
			"supportsFiles":      false,
		}},
		"permissions":  []string{"identity", "messageTeamMembers"},
		"validDomains": []string{u.Host},
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding the manifest: %w", err)
	}
	return append(b, '\n'), nil
}

// Zip is the app package: manifest.json, color.png and outline.png at the
// top of a zip, as Teams takes it.
func (p Package) Zip() ([]byte, error) {
	manifest, err := p.Manifest()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	files := []struct {
		name string
		data func() ([]byte, error)
	}{
		{"manifest.json", func() ([]byte, error) { return manifest, nil }},
		{"color.png", func() ([]byte, error) { return encodePNG(colorIcon()) }},
		{"outline.png", func() ([]byte, error) { return encodePNG(outlineIcon()) }},
	}
	// A fixed time: the same settings make the same package.
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, f := range files {
		data, err := f.data()
		if err != nil {
			return nil, err
		}
		w, err := z.CreateHeader(&zip.FileHeader{Name: f.name, Method: zip.Deflate, Modified: at})
		if err != nil {
			return nil, fmt.Errorf("writing the package: %w", err)
		}
		if _, err := w.Write(data); err != nil {
			return nil, fmt.Errorf("writing the package: %w", err)
		}
	}
	if err := z.Close(); err != nil {
		return nil, fmt.Errorf("writing the package: %w", err)
	}
	return buf.Bytes(), nil
}

func encodePNG(img image.Image) ([]byte, error) {
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		return nil, fmt.Errorf("drawing the icon: %w", err)
	}
	return b.Bytes(), nil
}

// glyph is the icon's picture on a unit square: a speech bubble with a
// question mark's dot and stroke cut out, as a mask.
func glyph(x, y float64) bool {
	inBubble := x >= 0.18 && x <= 0.82 && y >= 0.2 && y <= 0.68
	tail := y > 0.68 && y <= 0.82 && x >= 0.3 && x <= 0.3+(0.82-y)
	dot := x >= 0.46 && x <= 0.54 && y >= 0.56 && y <= 0.62
	stroke := (x >= 0.46 && x <= 0.54 && y >= 0.42 && y <= 0.52) ||
		(y >= 0.28 && y <= 0.34 && x >= 0.38 && x <= 0.62) ||
		(x >= 0.56 && x <= 0.62 && y >= 0.28 && y <= 0.44) ||
		(y >= 0.4 && y <= 0.46 && x >= 0.46 && x <= 0.62)
	return (inBubble || tail) && !dot && !stroke
}

// colorIcon is the full-colour icon: the white glyph on the accent colour.
func colorIcon() image.Image {
	img := image.NewNRGBA(image.Rect(0, 0, colorIconSize, colorIconSize))
	accent := color.NRGBA{0x4F, 0x6B, 0xED, 0xFF}
	for y := range colorIconSize {
		for x := range colorIconSize {
			c := accent
			if glyph((float64(x)+0.5)/colorIconSize, (float64(y)+0.5)/colorIconSize) {
				c = color.NRGBA{0xFF, 0xFF, 0xFF, 0xFF}
			}
			img.SetNRGBA(x, y, c)
		}
	}
	return img
}

// outlineIcon is the outline icon: the glyph in white on transparent.
func outlineIcon() image.Image {
	img := image.NewNRGBA(image.Rect(0, 0, outlineIconSize, outlineIconSize))
	for y := range outlineIconSize {
		for x := range outlineIconSize {
			if glyph((float64(x)+0.5)/outlineIconSize, (float64(y)+0.5)/outlineIconSize) {
				img.SetNRGBA(x, y, color.NRGBA{0xFF, 0xFF, 0xFF, 0xFF})
			}
		}
	}
	return img
}
