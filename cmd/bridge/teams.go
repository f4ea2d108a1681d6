package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/askbridge/askbridge/adapters/teams"
)

const teamsUsage = `usage: askbridge teams manifest [--app-id ID] [--public-url URL] [--config FILE] [--out FILE]
                                [--name NAME] [--app-version X.Y.Z]

Writes the Teams app package (manifest.json, color.png and outline.png, zipped) for
the bot: upload it in Teams (Apps → Manage your apps → Upload an app) so people can
add the bot to a team or a chat (docs/teams.md).

  --app-id       the Microsoft App ID of the Azure Bot, a GUID (default: TEAMS_APP_ID or teams.app_id)
  --public-url   the https address Teams reaches the bridge at (BRIDGE_PUBLIC_URL, or
                 public_url in the configuration file)
  --config       configuration file read for public_url (BRIDGE_CONFIG)
  --out          where to write the package (default askbridge-teams.zip)
  --name         the app's name in Teams (default askbridge)
  --app-version  the package's version (default 1.0.0); raise it to update an uploaded app`

// teamsCommand is `askbridge teams ...`.
func teamsCommand(_ context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "manifest" {
		fmt.Fprintln(stderr, teamsUsage)
		return 2
	}
	fs := flag.NewFlagSet("askbridge teams manifest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	appID := fs.String("app-id", "", "")
	publicURL := fs.String("public-url", "", "")
	config := fs.String("config", getenv("BRIDGE_CONFIG"), "")
	out := fs.String("out", "askbridge-teams.zip", "")
	name := fs.String("name", "", "")
	version := fs.String("app-version", "", "")
	fs.Usage = func() {}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, teamsUsage)
			return 0
		}
		fmt.Fprintln(stderr, teamsUsage)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "askbridge teams manifest: unexpected argument %q\n%s\n", fs.Arg(0), teamsUsage)
		return 2
	}
	u, id := *publicURL, *appID
	if u == "" || id == "" {
		s, err := loadConfig(*config, getenv)
		if err != nil {
			fmt.Fprintln(stderr, "askbridge teams manifest:", err)
			return 1
		}
		if u == "" {
			u = s.PublicURL
		}
		if id == "" {
			id = s.Teams.AppID
		}
	}
	p := teams.Package{AppID: id, PublicURL: u, Name: *name, Version: *version}
	b, err := p.Zip()
	if err != nil {
		fmt.Fprintf(stderr, "askbridge teams manifest: %v (flag --app-id, TEAMS_APP_ID or teams.app_id; flag --public-url, BRIDGE_PUBLIC_URL or public_url)\n", err)
		return 1
	}
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		fmt.Fprintln(stderr, "askbridge teams manifest: writing the package:", err)
		return 1
	}
	abs, _ := filepath.Abs(*out)
	fmt.Fprintf(stdout, "Wrote %s: the Teams app (manifest %s) of bot %s.\n", abs, teams.ManifestVersion, p.AppID)
	fmt.Fprintf(stdout, "The Azure Bot's messaging endpoint must be %s.\n", p.MessagingEndpoint())
	fmt.Fprintln(stdout, "Upload the package in Teams: Apps → Manage your apps → Upload an app (docs/teams.md).")
	return 0
}
