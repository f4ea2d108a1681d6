package telegram

import (
	"log/slog"

	"github.com/askbridge/askbridge/adapters/channeltest"
)

func newLog() (*slog.Logger, func() string) { return channeltest.NewLog() }
