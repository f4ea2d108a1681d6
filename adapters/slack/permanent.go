package slack

// permanentCodes are Slack error codes that no retry can fix: the message
// or channel is gone or closed to the bot, the token is dead or lacks a
// scope, or the request breaks a limit and would break it again. Anything
// else — ratelimited, internal_error, fatal_error, service_unavailable,
// request_timeout, 5xx, network failures — may pass and stays retryable.
// https://api.slack.com/methods/chat.update#errors,
// https://api.slack.com/methods/chat.postMessage#errors
var permanentCodes = map[string]bool{
	// the message or its place
	"message_not_found": true, "cant_update_message": true, "edit_window_closed": true,
	"channel_not_found": true, "is_archived": true, "not_in_channel": true, "thread_not_found": true,
	"restricted_action": true, "restricted_action_read_only_channel": true,
	"restricted_action_thread_only_channel": true, "restricted_action_non_threadable_channel": true,
	"team_access_not_granted": true, "ekm_access_denied": true,
	// the token
	"invalid_auth": true, "not_authed": true, "account_inactive": true, "token_revoked": true,
	"token_expired": true, "no_permission": true, "missing_scope": true, "not_allowed_token_type": true,
	"two_factor_setup_required": true, "org_login_required": true,
	// the request itself
	"msg_too_long": true, "msg_blocks_too_long": true, "no_text": true, "invalid_blocks": true,
	"invalid_blocks_format": true, "invalid_arguments": true, "invalid_arg_name": true,
	"invalid_charset": true, "invalid_form_data": true, "invalid_json": true, "json_not_object": true,
	"too_many_attachments": true, "invalid_attachments": true, "invalid_metadata_format": true,
	"method_deprecated": true, "deprecated_endpoint": true, "unknown_method": true,
}

// Permanent reports whether the call cannot succeed on a retry
// (lifecycle.IsPermanent): Slack answered "ok": false with one of the codes
// above. Transport failures and rate limits are not permanent.
func (e *Error) Permanent() bool { return permanentCodes[e.Code] }
