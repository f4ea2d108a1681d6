package discord

import "net/http"

// Discord JSON error codes that no retry can fix.
// https://discord.com/developers/docs/topics/opcodes-and-status-codes#json
var permanentCodes = map[int]bool{
	10003:              true, // Unknown Channel
	codeUnknownMessage: true,
	50001:              true, // Missing Access
	50013:              true, // Missing Permissions
	50035:              true, // Invalid Form Body
}

// Permanent reports whether the call cannot succeed on a retry
// (lifecycle.IsPermanent): Discord refused the request itself — the message or
// channel is gone, the bot lacks access, the body breaks a limit, the
// token is wrong. 429, 5xx, network failures and timeouts are not
// permanent.
func (e *apiError) Permanent() bool {
	if permanentCodes[e.Code] {
		return true
	}
	switch e.Status {
	case http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound:
		return true
	}
	return false
}
