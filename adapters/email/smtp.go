package email

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"time"

	mail "github.com/wneessen/go-mail"
)

// smtpTarget is email.smtp_url, parsed:
//
//	smtp://user@mail.example:587            STARTTLS, required (default port 587)
//	smtps://user@mail.example:465           TLS from the first byte (default port 465)
//	smtp+insecure://127.0.0.1:1025          no TLS: a loopback address only (a local relay, tests)
//
// ?auth=plain or ?auth=login picks the AUTH mechanism (default: the
// strongest the server offers). The password is never in the URL: it
// comes from email.smtp_password(_file) or its environment variable.
type smtpTarget struct {
	host     string
	port     int
	mode     string // "starttls", "tls", "insecure"
	user     string
	auth     mail.SMTPAuthType
	password string
}

// parseSMTPURL reads email.smtp_url; its errors name the key and the fix.
func parseSMTPURL(raw, password string) (smtpTarget, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return smtpTarget{}, errors.New("email.smtp_url: not a URL; write it as smtp://user@mail.example:587 (STARTTLS) or smtps://user@mail.example:465 (TLS)")
	}
	t := smtpTarget{host: u.Hostname(), password: password}
	switch u.Scheme {
	case "smtp":
		t.mode, t.port = "starttls", 587
	case "smtps":
		t.mode, t.port = "tls", 465
	case "smtp+insecure":
		t.mode, t.port = "insecure", 25
		if !isLoopbackHost(t.host) {
			return smtpTarget{}, fmt.Errorf("email.smtp_url: smtp+insecure:// sends mail and passwords unencrypted and is allowed only to a loopback address (127.0.0.1, ::1, localhost), not %q; use smtp:// (STARTTLS) or smtps://", t.host)
		}
	default:
		return smtpTarget{}, fmt.Errorf("email.smtp_url: scheme %q is not smtp://, smtps:// or smtp+insecure:// (loopback only)", u.Scheme)
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return smtpTarget{}, fmt.Errorf("email.smtp_url: port %q is not a port number", p)
		}
		t.port = n
	}
	if u.User != nil {
		if _, set := u.User.Password(); set {
			return smtpTarget{}, errors.New("email.smtp_url: put no password in the URL; set email.smtp_password_file or EMAIL_SMTP_PASSWORD")
		}
		t.user = u.User.Username()
	}
	switch strings.ToLower(u.Query().Get("auth")) {
	case "":
		t.auth = mail.SMTPAuthAutoDiscover
	case "plain":
		t.auth = mail.SMTPAuthPlain
	case "login":
		t.auth = mail.SMTPAuthLogin
	default:
		return smtpTarget{}, fmt.Errorf("email.smtp_url: auth=%q is not plain or login", u.Query().Get("auth"))
	}
	if t.user != "" && t.mode == "insecure" {
		// PLAIN and LOGIN over a loopback connection: go-mail refuses
		// them unencrypted unless told.
		switch t.auth {
		case mail.SMTPAuthLogin:
			t.auth = mail.SMTPAuthLoginNoEnc
		default:
			t.auth = mail.SMTPAuthPlainNoEnc
		}
	}
	if t.user == "" && t.password != "" {
		return smtpTarget{}, errors.New("email.smtp_url: a password is set but the URL names no user; write smtp://user@host:587")
	}
	return t, nil
}

func isLoopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// send delivers m over one SMTP connection.
func (t smtpTarget) send(ctx context.Context, m *mail.Msg, tlsConf *tls.Config, timeout time.Duration) error {
	opts := []mail.Option{mail.WithPort(t.port), mail.WithTimeout(timeout), mail.WithoutNoop()}
	conf := &tls.Config{ServerName: t.host, MinVersion: tls.VersionTLS12}
	if tlsConf != nil {
		conf = tlsConf.Clone()
		if conf.ServerName == "" {
			conf.ServerName = t.host
		}
	}
	switch t.mode {
	case "starttls":
		opts = append(opts, mail.WithTLSPolicy(mail.TLSMandatory), mail.WithTLSConfig(conf))
	case "tls":
		opts = append(opts, mail.WithSSL(), mail.WithTLSConfig(conf))
	case "insecure":
		opts = append(opts, mail.WithTLSPolicy(mail.NoTLS))
	}
	if t.user != "" {
		opts = append(opts, mail.WithSMTPAuth(t.auth), mail.WithUsername(t.user), mail.WithPassword(t.password))
	}
	c, err := mail.NewClient(t.host, opts...)
	if err != nil {
		return err
	}
	return c.DialAndSendWithContext(ctx, m)
}

// refusal is a permanent refusal by the mail server (a 5xx reply: an
// unknown mailbox, a rejected sender, failed authentication).
type refusal struct {
	code int
	msg  string
}

func (r *refusal) Error() string {
	return fmt.Sprintf("the mail server refused the mail (%d %s)", r.code, r.msg)
}

// classify turns an SMTP error into a refusal when the server gave a 5xx
// reply; any other error (4xx, network, TLS) is worth retrying. The
// returned text never holds the password (go-mail never puts it there;
// the server's reply is kept, cut short).
func classify(err error) error {
	if err == nil {
		return nil
	}
	var tp *textproto.Error
	if errors.As(err, &tp) && tp.Code >= 500 && tp.Code < 600 {
		return &refusal{code: tp.Code, msg: cutReply(tp.Msg)}
	}
	var se *mail.SendError
	if errors.As(err, &se) && !se.IsTemp() {
		if c := se.ErrorCode(); c >= 500 && c < 600 {
			return &refusal{code: c, msg: cutReply(se.Error())}
		}
	}
	return err
}

func cutReply(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
