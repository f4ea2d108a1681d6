package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/telegram/faketelegram"
)

// The configuration's telegram keys and Telegram's target names.
func TestTelegramConfig(t *testing.T) {
	dir := t.TempDir()
	tok := filepath.Join(dir, "token")
	sec := filepath.Join(dir, "secret")
	if err := os.WriteFile(tok, []byte("123:abc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sec, []byte("hook_secret-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "c.yaml")
	yaml := "telegram: {token_file: " + tok + ", webhook_secret_file: " + sec + ", api_url: https://tg.example}\n" +
		"routes:\n  - {name: oncall, default: true, targets: [{platform: telegram, chat: \"-1001234\", thread: 42}], responders: {users: [\"telegram:99\"]}}\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := loadConfig(cfg, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if s.Telegram.Token != "123:abc" || s.Telegram.WebhookSecret != "hook_secret-1" || s.Telegram.APIURL != "https://tg.example" {
		t.Errorf("telegram settings: %+v", s.Telegram)
	}
	if tg := s.Routes[0].Targets[0]; tg.Platform != "telegram" || tg.Channel != "-1001234" || tg.ThreadTS != "42" {
		t.Errorf("target: %+v", tg)
	}
	// A route on Telegram without a token says which setting is missing.
	if err := os.WriteFile(cfg, []byte("routes:\n  - {name: oncall, targets: [{platform: telegram, chat: \"-1\"}]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := loadConfig(cfg, func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "TELEGRAM_BOT_TOKEN") {
		t.Errorf("a Telegram route without a token: %v", err)
	}
}

// `askbridge telegram set-webhook` calls setWebhook with the secret; without
// one it refuses and says what to set.
func TestTelegramSetWebhookCommand(t *testing.T) {
	f := faketelegram.New(t)
	env := map[string]string{"TELEGRAM_BOT_TOKEN": f.Token, "TELEGRAM_API_URL": f.URL(), "BRIDGE_PUBLIC_URL": "https://bridge.example"}
	getenv := func(k string) string { return env[k] }
	var out, errs bytes.Buffer
	if code := run(context.Background(), []string{"telegram", "set-webhook"}, getenv, nil, &out, &errs); code != 1 || !strings.Contains(errs.String(), "webhook_secret_file") {
		t.Errorf("without a secret: exit %d, %q", code, errs.String())
	}
	env["TELEGRAM_WEBHOOK_SECRET"] = "hook_secret-1"
	out.Reset()
	errs.Reset()
	if code := run(context.Background(), []string{"telegram", "set-webhook"}, getenv, nil, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	if u, s := f.Webhook(); u != "https://bridge.example/telegram/webhook" || s != "hook_secret-1" {
		t.Errorf("webhook %q, secret %q", u, s)
	}
	if strings.Contains(out.String()+errs.String(), f.Token) {
		t.Error("the token was printed")
	}
}
