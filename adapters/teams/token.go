package teams

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// The bot calls the Bot Connector with an app token from the Microsoft
// identity platform: the OAuth 2.0 client credentials grant for the scope
// https://api.botframework.com/.default, at the tenant's token endpoint
// (botframework.com for a multi-tenant bot).

// BotFrameworkScope is the scope of the app token.
const BotFrameworkScope = "https://api.botframework.com/.default"

// DefaultTokenURL is the token endpoint of tenant ("botframework.com" for a
// multi-tenant bot).
func DefaultTokenURL(tenant string) string {
	if tenant == "" {
		tenant = "botframework.com"
	}
	return "https://login.microsoftonline.com/" + url.PathEscape(tenant) + "/oauth2/v2.0/token"
}

// tokenEarly is how long before its expiry a token is replaced.
const tokenEarly = 5 * time.Minute

// tokenSource fetches and caches the app token. One fetch at a time: the
// calls waiting meanwhile use its token.
type tokenSource struct {
	url, appID, secret string
	client             *http.Client
	now                func() time.Time

	mu      sync.Mutex
	token   string
	expires time.Time
}

// tokenError is the identity platform refusing the credentials (or
// failing); it never holds the secret.
type tokenError struct {
	Status int
	Code   string // OAuth error, e.g. invalid_client
}

func (e *tokenError) Error() string {
	if e.Code != "" {
		return fmt.Sprintf("teams: getting an app token failed: %s (HTTP %d); check TEAMS_APP_ID, TEAMS_APP_SECRET and TEAMS_TENANT_ID", e.Code, e.Status)
	}
	return fmt.Sprintf("teams: getting an app token failed: HTTP %d", e.Status)
}

// Permanent: wrong credentials need a person; a 5xx or 429 does not.
func (e *tokenError) Permanent() bool {
	return e.Status == http.StatusBadRequest || e.Status == http.StatusUnauthorized
}

// get returns a token valid for at least tokenEarly.
func (s *tokenSource) get(ctx context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.token != "" && s.now().Before(s.expires.Add(-tokenEarly)) {
		return s.token, nil
	}
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {s.appID},
		"client_secret": {s.secret}, "scope": {BotFrameworkScope}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, strings.NewReader(form.Encode()))
	if err != nil {
		return "", fmt.Errorf("teams: the token URL is not valid")
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := s.client.Do(req)
	if err != nil {
		return "", fmt.Errorf("teams: getting an app token failed: %w", unwrapURL(err))
	}
	defer resp.Body.Close()
	var body struct {
		AccessToken string          `json:"access_token"`
		ExpiresIn   json.Number     `json:"expires_in"`
		Error       string          `json:"error"`
		Extra       json.RawMessage `json:"-"`
	}
	_ = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&body)
	if resp.StatusCode != http.StatusOK || body.AccessToken == "" {
		return "", &tokenError{Status: resp.StatusCode, Code: body.Error}
	}
	secs, err := body.ExpiresIn.Int64()
	if err != nil || secs <= 0 {
		secs = 3600
	}
	s.token, s.expires = body.AccessToken, s.now().Add(time.Duration(secs)*time.Second)
	return s.token, nil
}

// drop forgets the cached token (the Connector refused it).
func (s *tokenSource) drop(token string) {
	s.mu.Lock()
	if s.token == token {
		s.token = ""
	}
	s.mu.Unlock()
}

// unwrapURL strips net/http's "Post <url>:" wrapper (URLs are not secret
// here, but the message reads better without).
func unwrapURL(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		return ue.Err
	}
	return err
}
