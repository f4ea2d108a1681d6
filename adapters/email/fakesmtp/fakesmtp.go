// Package fakesmtp is an SMTP server on loopback for tests, built on
// github.com/emersion/go-smtp: it speaks real SMTP (EHLO, STARTTLS or TLS
// from the first byte, AUTH PLAIN and LOGIN, MAIL, RCPT, DATA) and keeps
// what it accepted. Like a real server it refuses an unknown mailbox with
// 550, a wrong password with 535, and on request answers 4xx or 5xx.
package fakesmtp

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"mime"
	"mime/multipart"
	"net"
	"net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Mode is how the server takes connections.
type Mode string

// Modes.
const (
	StartTLS Mode = "starttls" // plain, then STARTTLS (required before AUTH and MAIL)
	TLS      Mode = "tls"      // TLS from the first byte
	Plain    Mode = "plain"    // no TLS at all
)

// Options configure a server.
type Options struct {
	Mode Mode
	// User and Password, when set, are required (AUTH PLAIN or LOGIN).
	User, Password string
	// Mechanisms offered (default PLAIN and LOGIN).
	Mechanisms []string
}

// Message is one accepted mail.
type Message struct {
	From string
	To   []string
	Data []byte
}

// Header returns the parsed header of the mail.
func (m Message) Header() mail.Header {
	msg, err := mail.ReadMessage(bytes.NewReader(m.Data))
	if err != nil {
		return mail.Header{}
	}
	return msg.Header
}

// Parts returns the decoded body parts by content type ("text/plain",
// "text/html").
func (m Message) Parts() map[string]string {
	out := map[string]string{}
	msg, err := mail.ReadMessage(bytes.NewReader(m.Data))
	if err != nil {
		return out
	}
	collect(out, msg.Header.Get("Content-Type"), msg.Header.Get("Content-Transfer-Encoding"), msg.Body)
	return out
}

func collect(out map[string]string, ctype, cte string, body io.Reader) {
	mt, params, err := mime.ParseMediaType(ctype)
	if err != nil {
		return
	}
	if strings.HasPrefix(mt, "multipart/") {
		mr := multipart.NewReader(body, params["boundary"])
		for {
			p, err := mr.NextRawPart()
			if err != nil {
				return
			}
			collect(out, p.Header.Get("Content-Type"), p.Header.Get("Content-Transfer-Encoding"), p)
		}
	}
	b, _ := io.ReadAll(decode(cte, body))
	out[mt] = string(b)
}

// Server is a running fake.
type Server struct {
	Addr string
	// CA trusts the server's certificate (TLS modes).
	CA *x509.CertPool

	opts Options
	srv  *smtp.Server

	mu       sync.Mutex
	msgs     []Message
	unknown  map[string]bool
	failCode int
	failN    int
	auths    []string
	conns    int
}

// Start runs a server on 127.0.0.1 until the test ends.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	if o.Mode == "" {
		o.Mode = StartTLS
	}
	if o.Mechanisms == nil {
		o.Mechanisms = []string{sasl.Plain, sasl.Login}
	}
	s := &Server{opts: o, unknown: map[string]bool{}}
	s.srv = smtp.NewServer(backend{s})
	s.srv.Domain = "fake.smtp.test"
	s.srv.ReadTimeout, s.srv.WriteTimeout = 10*time.Second, 10*time.Second
	s.srv.MaxMessageBytes = 10 << 20
	s.srv.MaxRecipients = 50
	s.srv.AllowInsecureAuth = o.Mode == Plain
	var ln net.Listener
	var err error
	switch o.Mode {
	case Plain:
		ln, err = net.Listen("tcp", "127.0.0.1:0")
	default:
		conf, pool := selfSigned(t)
		s.CA = pool
		s.srv.TLSConfig = conf
		if o.Mode == TLS {
			ln, err = tls.Listen("tcp", "127.0.0.1:0", conf)
		} else {
			ln, err = net.Listen("tcp", "127.0.0.1:0")
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	s.Addr = ln.Addr().String()
	go func() { _ = s.srv.Serve(ln) }()
	t.Cleanup(func() { _ = s.srv.Close() })
	return s
}

// Messages returns the mails accepted so far.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.msgs...)
}

// Unknown makes RCPT TO addr answer 550 (no such mailbox).
func (s *Server) Unknown(addr string) {
	s.mu.Lock()
	s.unknown[strings.ToLower(addr)] = true
	s.mu.Unlock()
}

// Fail makes the next n transactions answer code at MAIL FROM (421 or 451
// for a temporary failure, 554 for a permanent one).
func (s *Server) Fail(code, n int) {
	s.mu.Lock()
	s.failCode, s.failN = code, n
	s.mu.Unlock()
}

// Auths lists the mechanisms clients authenticated with.
func (s *Server) Auths() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.auths...)
}

type backend struct{ s *Server }

func (b backend) NewSession(c *smtp.Conn) (smtp.Session, error) {
	b.s.mu.Lock()
	b.s.conns++
	b.s.mu.Unlock()
	return &session{s: b.s, c: c}, nil
}

type session struct {
	s      *Server
	c      *smtp.Conn
	authed bool
	from   string
	to     []string
}

var _ smtp.AuthSession = (*session)(nil)

func (ss *session) AuthMechanisms() []string { return ss.s.opts.Mechanisms }

func (ss *session) Auth(mech string) (sasl.Server, error) {
	check := func(user, pass string) error {
		if user != ss.s.opts.User || pass != ss.s.opts.Password {
			return &smtp.SMTPError{Code: 535, EnhancedCode: smtp.EnhancedCode{5, 7, 8}, Message: "Authentication credentials invalid"}
		}
		ss.authed = true
		ss.s.mu.Lock()
		ss.s.auths = append(ss.s.auths, mech)
		ss.s.mu.Unlock()
		return nil
	}
	switch mech {
	case sasl.Plain:
		return sasl.NewPlainServer(func(_, user, pass string) error { return check(user, pass) }), nil
	case sasl.Login:
		return &loginServer{check: check}, nil
	}
	return nil, errors.New("unsupported mechanism")
}

func (ss *session) tlsOK() bool {
	_, ok := ss.c.TLSConnectionState()
	return ok || ss.s.opts.Mode == Plain
}

func (ss *session) Mail(from string, _ *smtp.MailOptions) error {
	if !ss.tlsOK() {
		return &smtp.SMTPError{Code: 530, EnhancedCode: smtp.EnhancedCode{5, 7, 0}, Message: "Must issue a STARTTLS command first"}
	}
	if ss.s.opts.User != "" && !ss.authed {
		return smtp.ErrAuthRequired
	}
	ss.s.mu.Lock()
	defer ss.s.mu.Unlock()
	if ss.s.failN > 0 {
		ss.s.failN--
		code := ss.s.failCode
		cls := code / 100
		return &smtp.SMTPError{Code: code, EnhancedCode: smtp.EnhancedCode{cls, 3, 0}, Message: "Service unavailable (fake failure)"}
	}
	ss.from = from
	return nil
}

func (ss *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	ss.s.mu.Lock()
	unknown := ss.s.unknown[strings.ToLower(to)]
	ss.s.mu.Unlock()
	if unknown {
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "No such user here"}
	}
	ss.to = append(ss.to, to)
	return nil
}

func (ss *session) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	ss.s.mu.Lock()
	ss.s.msgs = append(ss.s.msgs, Message{From: ss.from, To: append([]string(nil), ss.to...), Data: b})
	ss.s.mu.Unlock()
	return nil
}

func (ss *session) Reset()        { ss.from, ss.to = "", nil }
func (ss *session) Logout() error { return nil }

// loginServer is the LOGIN mechanism (go-sasl has only its client).
type loginServer struct {
	check func(user, pass string) error
	step  int
	user  string
}

func (l *loginServer) Next(resp []byte) ([]byte, bool, error) {
	switch l.step {
	case 0:
		l.step = 1
		if len(resp) == 0 {
			return []byte("Username:"), false, nil
		}
		l.user, l.step = string(resp), 2
		return []byte("Password:"), false, nil
	case 1:
		l.user, l.step = string(resp), 2
		return []byte("Password:"), false, nil
	}
	return nil, true, l.check(l.user, string(resp))
}

// selfSigned makes a certificate for 127.0.0.1 and a pool that trusts it.
func selfSigned(t testing.TB) (*tls.Config, *x509.CertPool) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "fake smtp"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, MinVersion: tls.VersionTLS12}, pool
}
