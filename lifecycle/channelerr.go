package lifecycle

import "errors"

// A Channel tells the Router which of its failures cannot succeed on a
// retry (the copy was deleted, the bot was removed from the channel, the
// message breaks a platform limit): it wraps them with Permanent, or
// returns an error with a Permanent() bool method that reports true. The
// Router then stops at the first attempt instead of retrying for
// RouterConfig.CopyRetryFor. Every other error (rate limits, 5xx, network
// failures, timeouts) counts as transient and is retried.

// Permanent marks err as a failure that no retry can fix. Permanent(nil)
// is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err: err}
}

// IsPermanent reports whether err, or an error it wraps, was marked with
// Permanent or has a Permanent() bool method that reports true.
func IsPermanent(err error) bool {
	var p interface{ Permanent() bool }
	return errors.As(err, &p) && p.Permanent()
}

type permanentError struct{ err error }

func (e *permanentError) Error() string   { return e.err.Error() }
func (e *permanentError) Unwrap() error   { return e.err }
func (e *permanentError) Permanent() bool { return true }
