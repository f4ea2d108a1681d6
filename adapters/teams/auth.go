package teams

import (
	"context"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Inbound requests carry a JWT the Bot Framework signed (Authorization:
// Bearer …). It is checked with github.com/golang-jwt/jwt/v5 — the
// maintained JWT package of the Go ecosystem, small, with no dependencies,
// and strict by default (the algorithm is pinned, "none" refused) — against
// the RSA keys the Bot Framework's OpenID metadata names. The rules are
// Microsoft's ("Authenticate requests from the Bot Connector service"):
// issuer https://api.botframework.com, audience the bot's app id, not
// expired (5 minutes of clock skew), signed by a key whose endorsements
// name the activity's channel, and the serviceurl claim equal to the
// activity's serviceUrl.

// Defaults of the Bot Framework's identity for inbound requests.
const (
	DefaultOpenIDMetadataURL = "https://login.botframework.com/v1/.well-known/openidconfiguration"
	BotFrameworkIssuer       = "https://api.botframework.com"
)

// keyRefreshEvery is how often the keys are fetched again although none is
// unknown (Microsoft rotates them; its SDKs refresh daily).
const keyRefreshEvery = 24 * time.Hour

// keyRetryAfterFailure is how soon the keys are fetched again after a
// fetch failed: an outage of the metadata, or the request that wanted
// them cancelled, must not refuse every request until KeyRefreshMin.
const keyRetryAfterFailure = 2 * time.Second

// errUnauthorized is every refusal of a request's token: the reason goes to
// the log at debug level only, the caller gets 401.
var errUnauthorized = errors.New("teams: the request's Bot Framework token is not valid")

// botClaims are the claims of a Bot Framework token.
type botClaims struct {
	jwt.RegisteredClaims
	ServiceURL string `json:"serviceurl"`
}

// verified is what a token that passed says.
type verified struct {
	ServiceURL   string
	Endorsements []string // channels the signing key may sign for
}

type jwk struct {
	Kty          string   `json:"kty"`
	Kid          string   `json:"kid"`
	N            string   `json:"n"`
	E            string   `json:"e"`
	Endorsements []string `json:"endorsements"`
}

type signingKey struct {
	pub          *rsa.PublicKey
	endorsements []string
}

// verifier checks Bot Framework tokens against the keys of the OpenID
// metadata, fetched when first needed, again daily, and again when a token
// names a key it does not know — at most once per minRefresh, so forged
// tokens with made-up key ids cannot make it fetch on every request.
type verifier struct {
	metadataURL string
	appID       string
	issuer      string
	skew        time.Duration
	minRefresh  time.Duration
	client      *http.Client
	now         func() time.Time

	mu      sync.Mutex
	keys    map[string]signingKey
	fetched time.Time // keys last fetched successfully
	tried   time.Time // last fetch attempt
}

// verify checks the Authorization header's token and returns its claims.
func (v *verifier) verify(ctx context.Context, header string) (verified, error) {
	raw, ok := strings.CutPrefix(header, "Bearer ")
	if !ok || raw == "" {
		return verified{}, fmt.Errorf("%w: no bearer token", errUnauthorized)
	}
	var claims botClaims
	var used signingKey
	p := jwt.NewParser(jwt.WithValidMethods([]string{"RS256"}), jwt.WithIssuer(v.issuer),
		jwt.WithAudience(v.appID), jwt.WithLeeway(v.skew), jwt.WithExpirationRequired(), jwt.WithTimeFunc(v.now))
	_, err := p.ParseWithClaims(raw, &claims, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		k, err := v.key(ctx, kid)
		used = k
		return k.pub, err
	})
	if err != nil {
		return verified{}, fmt.Errorf("%w: %v", errUnauthorized, err)
	}
	if claims.ServiceURL == "" {
		return verified{}, fmt.Errorf("%w: no serviceurl claim", errUnauthorized)
	}
	return verified{ServiceURL: claims.ServiceURL, Endorsements: used.endorsements}, nil
}

// check refuses an activity its verified token does not cover: another
// serviceUrl than the token names, or a channel the key is not endorsed for.
func (vd verified) check(serviceURL, channelID string) error {
	if serviceURL != vd.ServiceURL {
		return fmt.Errorf("%w: the activity's serviceUrl is not the token's", errUnauthorized)
	}
	if len(vd.Endorsements) > 0 && !slices.Contains(vd.Endorsements, channelID) {
		return fmt.Errorf("%w: the signing key is not endorsed for channel %q", errUnauthorized, channelID)
	}
	return nil
}

// key returns the signing key kid, fetching the keys when they are old or
// kid is unknown (rate-limited).
func (v *verifier) key(ctx context.Context, kid string) (signingKey, error) {
	if kid == "" {
		return signingKey{}, errors.New("the token names no key")
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	now := v.now()
	k, known := v.keys[kid]
	stale := now.Sub(v.fetched) > keyRefreshEvery
	wait := v.minRefresh
	if v.fetched.Before(v.tried) { // the last fetch failed
		wait = min(wait, keyRetryAfterFailure)
	}
	if (known && !stale) || now.Sub(v.tried) < wait {
		if !known {
			return signingKey{}, errors.New("the token's key is unknown")
		}
		return k, nil
	}
	v.tried = now
	// The fetch serves every later request too: it does not end with the
	// request that started it.
	keys, err := v.fetch(context.WithoutCancel(ctx))
	if err != nil {
		if known { // keep using what was fetched before
			return k, nil
		}
		return signingKey{}, err
	}
	v.keys, v.fetched = keys, now
	if k, ok := keys[kid]; ok {
		return k, nil
	}
	return signingKey{}, errors.New("the token's key is unknown")
}

// fetch reads the OpenID metadata and its key set.
func (v *verifier) fetch(ctx context.Context) (map[string]signingKey, error) {
	var meta struct {
		JWKSURI string `json:"jwks_uri"`
	}
	if err := v.getJSON(ctx, v.metadataURL, &meta); err != nil {
		return nil, fmt.Errorf("reading the Bot Framework OpenID metadata: %w", err)
	}
	if meta.JWKSURI == "" {
		return nil, errors.New("the Bot Framework OpenID metadata names no jwks_uri")
	}
	var set struct {
		Keys []jwk `json:"keys"`
	}
	if err := v.getJSON(ctx, meta.JWKSURI, &set); err != nil {
		return nil, fmt.Errorf("reading the Bot Framework signing keys: %w", err)
	}
	keys := map[string]signingKey{}
	for _, k := range set.Keys {
		if k.Kty != "RSA" || k.Kid == "" {
			continue
		}
		n, err1 := base64.RawURLEncoding.DecodeString(strings.TrimRight(k.N, "="))
		e, err2 := base64.RawURLEncoding.DecodeString(strings.TrimRight(k.E, "="))
		if err1 != nil || err2 != nil || len(e) == 0 || len(e) > 4 {
			continue
		}
		exp := int(new(big.Int).SetBytes(e).Int64())
		pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: exp}
		if pub.N.BitLen() < 2048 {
			continue
		}
		keys[k.Kid] = signingKey{pub: pub, endorsements: k.Endorsements}
	}
	if len(keys) == 0 {
		return nil, errors.New("the Bot Framework key set holds no RSA key")
	}
	return keys, nil
}

func (v *verifier) getJSON(ctx context.Context, url string, out any) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := v.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(out)
}
