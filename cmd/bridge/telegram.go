package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/askbridge/askbridge/adapters/telegram"
)

const telegramUsage = `usage: askbridge telegram set-webhook [--config FILE] [--url URL]

Points the Telegram bot at this bridge's webhook: calls setWebhook with the
configured secret (telegram.webhook_secret_file or TELEGRAM_WEBHOOK_SECRET),
allowed_updates ["message", "callback_query"] and max_connections 40 (how
many updates Telegram delivers at once; below the bridge's bound of 64
requests in flight from one address). URL defaults to
<public_url>/telegram/webhook. Without a webhook secret the bridge uses
getUpdates long polling instead and needs no public URL (docs/telegram.md).`

// telegramCommand is `askbridge telegram ...`.
func telegramCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "set-webhook" {
		fmt.Fprintln(stderr, telegramUsage)
		return 2
	}
	fs := flag.NewFlagSet("askbridge telegram set-webhook", flag.ContinueOnError)
	fs.SetOutput(stderr)
	config := fs.String("config", getenv("BRIDGE_CONFIG"), "configuration file (BRIDGE_CONFIG)")
	hook := fs.String("url", "", "the webhook URL (default <public_url>/telegram/webhook)")
	fs.Usage = func() { fmt.Fprintln(stderr, telegramUsage) }
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	s, err := loadConfig(*config, getenv)
	if err != nil {
		fmt.Fprintln(stderr, "askbridge telegram set-webhook:", err)
		return 1
	}
	u := *hook
	if u == "" && s.PublicURL != "" {
		u = strings.TrimRight(s.PublicURL, "/") + "/telegram/webhook"
	}
	if err := telegram.SetWebhook(ctx, s.Telegram, u); err != nil {
		fmt.Fprintln(stderr, "askbridge telegram set-webhook:", err)
		return 1
	}
	fmt.Fprintf(stdout, "Telegram now delivers messages and button presses to %s\n", u)
	return 0
}
