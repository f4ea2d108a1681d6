// Package egress decides where the bridge may send resume webhooks (the trust
// model, docs/security.md). A resume url comes from whoever asks, so by default it may not reach
// the bridge's own machine, the private network or a cloud metadata service:
// literal addresses are refused when the question is asked (CheckURL), and
// every address a name resolves to is checked again when connecting
// (Policy.DialContext), so DNS rebinding cannot get around it. An operator
// admits internal receivers on purpose with an allow list.
package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Config configures a Policy.
type Config struct {
	// Allow admits destinations the default rules refuse: a CIDR
	// ("10.0.0.0/8"), an address ("10.1.2.3", "[fd00::1]:8443"), a host
	// name with or without a port ("runtime.internal",
	// "runtime.internal:8443"), or every subdomain ("*.svc.cluster.local").
	Allow []string
	// AllowLoopback admits this machine (127.0.0.0/8, ::1, localhost): the
	// local default, a bridge without tokens on a loopback address.
	AllowLoopback bool
	// LookupNetIP resolves names (default net.DefaultResolver.LookupNetIP);
	// tests inject their own.
	LookupNetIP func(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Policy is a compiled Config. The zero value is not usable; call New.
type Policy struct {
	nets          []allowNet
	hosts         map[string]bool // "name" or "name:port"
	suffixes      []string        // ".svc.cluster.local"
	allowLoopback bool
	lookup        func(ctx context.Context, network, host string) ([]netip.Addr, error)
}

type allowNet struct {
	prefix netip.Prefix
	port   string // "" = any port
	exact  bool   // a single address named on its own
}

// New compiles cfg. An entry that is neither a CIDR, an address nor a host
// name is an error naming it.
func New(cfg Config) (*Policy, error) {
	p := &Policy{hosts: map[string]bool{}, allowLoopback: cfg.AllowLoopback, lookup: cfg.LookupNetIP}
	if p.lookup == nil {
		p.lookup = net.DefaultResolver.LookupNetIP
	}
	var bad []string
	for _, raw := range cfg.Allow {
		e := strings.ToLower(strings.TrimSpace(raw))
		if e == "" {
			continue
		}
		if err := p.add(e); err != nil {
			bad = append(bad, fmt.Sprintf("%q: %v", raw, err))
		}
	}
	if len(bad) > 0 {
		return nil, errors.New(strings.Join(bad, "; "))
	}
	return p, nil
}

// MustNew is New for fixed configurations (tests, defaults).
func MustNew(cfg Config) *Policy {
	p, err := New(cfg)
	if err != nil {
		panic(err)
	}
	return p
}

func (p *Policy) add(e string) error {
	if pf, err := netip.ParsePrefix(e); err == nil {
		p.nets = append(p.nets, allowNet{prefix: pf.Masked(), exact: pf.IsSingleIP()})
		return nil
	}
	if a, err := netip.ParseAddr(e); err == nil {
		p.nets = append(p.nets, allowNet{prefix: netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()), exact: true})
		return nil
	}
	host, port := e, ""
	if h, pt, err := net.SplitHostPort(e); err == nil {
		host, port = h, pt
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return errors.New("the port must be a number from 1 to 65535")
		}
		if a, err := netip.ParseAddr(host); err == nil {
			p.nets = append(p.nets, allowNet{prefix: netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()), port: port, exact: true})
			return nil
		}
	}
	host = strings.TrimSuffix(host, ".")
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		if port != "" || !validName(rest) {
			return errors.New("a wildcard is written *.domain, without a port")
		}
		p.suffixes = append(p.suffixes, "."+rest)
		return nil
	}
	if !validName(host) {
		return errors.New("not a CIDR (10.0.0.0/8), an address, or a host name with an optional :port")
	}
	if port != "" {
		host += ":" + port
	}
	p.hosts[host] = true
	return nil
}

func validName(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, c := range h {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			return false
		}
	}
	return true
}

// RefusedError is why a destination is refused, in words a user can act on.
type RefusedError struct{ Reason string }

func (e *RefusedError) Error() string { return e.Reason }

func refused(format string, args ...any) error {
	return &RefusedError{Reason: fmt.Sprintf(format, args...)}
}

const allowHint = "; to deliver there on purpose, add it to webhooks.allow in the bridge's configuration"

// CheckURL checks a resume url when the question is asked: http or https,
// no user name or password, and a host that is not a refused literal
// address or a known internal name. Names are checked again, with every
// address they resolve to, when the webhook is sent.
func (p *Policy) CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return refused("must be an absolute http or https URL")
	}
	if u.User != nil {
		return refused("must not contain a user name or password (user:pass@); the webhook is authenticated by its signature")
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	if host == "" {
		return refused("must name a host")
	}
	if p.nameAllowed(host, port) {
		return nil
	}
	// Plain http carries the signed answer in clear text: only to a
	// destination the configuration admits (webhooks.allow, or loopback on
	// the embedded default).
	plain := u.Scheme == "http"
	const plainHint = "http:// would send the answer unencrypted; use https://, or add the host to webhooks.allow to deliver over http on purpose"
	if a, ok := ParseHostIP(host); ok {
		if err := p.checkAddr(a, port, host); err != nil {
			return err
		}
		if plain && !p.addrAdmitted(a, port) {
			return refused("%s", plainHint)
		}
		return nil
	}
	if looksNumeric(host) {
		return refused("%s is not a valid address", host)
	}
	if why := internalName(host); why != "" {
		if why == kindLoopback && p.allowLoopback {
			return nil
		}
		return refused("%s is %s; resume webhooks may not reach it%s", host, why, allowHint)
	}
	if plain {
		return refused("%s", plainHint)
	}
	return nil
}

// addrAdmitted reports whether the configuration admits ip:port on purpose
// (webhooks.allow, or loopback on the embedded default).
func (p *Policy) addrAdmitted(ip netip.Addr, port string) bool {
	ip = ip.Unmap().WithZone("")
	for _, n := range p.nets {
		if (n.port == "" || n.port == port) && n.prefix.Contains(ip) {
			return true
		}
	}
	return p.allowLoopback && Classify(ip) == kindLoopback
}

func (p *Policy) nameAllowed(host, port string) bool {
	if p.hosts[host] || p.hosts[host+":"+port] {
		return true
	}
	for _, s := range p.suffixes {
		if strings.HasSuffix(host, s) {
			return true
		}
	}
	return false
}

// CheckAddr reports why the address ip:port may not be reached, or nil.
func (p *Policy) CheckAddr(ip netip.Addr, port string) error { return p.checkAddr(ip, port, "") }

func (p *Policy) checkAddr(ip netip.Addr, port, name string) error {
	ip = ip.Unmap().WithZone("")
	kind := Classify(ip)
	if kind == "" {
		return nil
	}
	for _, n := range p.nets {
		if (n.port == "" || n.port == port) && n.prefix.Contains(ip) && (kind != kindMetadata || n.exact) {
			return nil
		}
	}
	if kind == kindLoopback && p.allowLoopback {
		return nil
	}
	what := ip.String()
	if name != "" && name != what {
		what = name + " (" + ip.String() + ")"
	}
	return refused("%s is %s; resume webhooks may not reach it%s", what, kind, allowHint)
}

// The kinds of refused destinations, as they read in an error.
const (
	kindLoopback    = "a loopback address (this machine)"
	kindPrivate     = "a private network address"
	kindLinkLocal   = "a link-local address"
	kindCGNAT       = "a shared (carrier-grade NAT) address"
	kindUnspecified = "the unspecified address"
	kindMulticast   = "a multicast or broadcast address"
	kindMetadata    = "a cloud metadata service"
	kindReserved    = "a reserved address"
)

var metadataAddrs = []netip.Addr{
	netip.MustParseAddr("169.254.169.254"), // AWS, GCP, Azure, OpenStack, …
	netip.MustParseAddr("169.254.170.2"),   // AWS ECS task metadata
	netip.MustParseAddr("fd00:ec2::254"),   // AWS IMDS over IPv6
	netip.MustParseAddr("100.100.100.200"), // Alibaba Cloud
	netip.MustParseAddr("192.0.0.192"),     // Oracle Cloud
}

var refusedNets = []struct {
	prefix netip.Prefix
	kind   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), kindUnspecified},
	{netip.MustParsePrefix("10.0.0.0/8"), kindPrivate},
	{netip.MustParsePrefix("100.64.0.0/10"), kindCGNAT},
	{netip.MustParsePrefix("127.0.0.0/8"), kindLoopback},
	{netip.MustParsePrefix("169.254.0.0/16"), kindLinkLocal},
	{netip.MustParsePrefix("172.16.0.0/12"), kindPrivate},
	{netip.MustParsePrefix("192.0.0.0/24"), kindReserved},
	{netip.MustParsePrefix("192.168.0.0/16"), kindPrivate},
	{netip.MustParsePrefix("198.18.0.0/15"), kindReserved},
	{netip.MustParsePrefix("224.0.0.0/4"), kindMulticast},
	{netip.MustParsePrefix("240.0.0.0/4"), kindReserved}, // and 255.255.255.255
	{netip.MustParsePrefix("::/128"), kindUnspecified},
	{netip.MustParsePrefix("::1/128"), kindLoopback},
	{netip.MustParsePrefix("100::/64"), kindReserved}, // discard
	{netip.MustParsePrefix("fc00::/7"), kindPrivate},
	{netip.MustParsePrefix("fe80::/10"), kindLinkLocal},
	{netip.MustParsePrefix("fec0::/10"), kindPrivate}, // deprecated site-local
	{netip.MustParsePrefix("ff00::/8"), kindMulticast},
}

// Prefixes whose IPv6 addresses carry an IPv4 address that is what is
// really reached: NAT64 (well-known and local-use, RFC 6052 and 8215),
// 6to4, IPv4-compatible (::a.b.c.d, deprecated but still routed to the
// IPv4 address by some stacks) and IPv4-translated (::ffff:0:a.b.c.d).
var (
	nat64        = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local   = netip.MustParsePrefix("64:ff9b:1::/48")
	sixTo4       = netip.MustParsePrefix("2002::/16")
	v4Compatible = netip.MustParsePrefix("::/96")
	v4Translated = netip.MustParsePrefix("::ffff:0:0:0/96")
)

// Classify names the kind of destination ip is if it is refused by
// default ("a loopback address (this machine)", …), else "".
func Classify(ip netip.Addr) string {
	ip = ip.Unmap().WithZone("")
	for _, m := range metadataAddrs {
		if ip == m {
			return kindMetadata
		}
	}
	if ip.Is6() {
		b := ip.As16()
		last4 := netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
		switch {
		case ip == netip.IPv6Unspecified() || ip == netip.IPv6Loopback():
			// ::/128 and ::1/128 below, not IPv4-compatible forms
		case nat64.Contains(ip), v4Compatible.Contains(ip), v4Translated.Contains(ip):
			return Classify(last4)
		case nat64Local.Contains(ip):
			// Local-use NAT64 (RFC 8215) translates inside one network: it
			// is internal whatever it embeds. Its most common /96 form is
			// named by the IPv4 address it carries.
			if k := Classify(last4); k != "" && k != kindUnspecified {
				return k
			}
			return kindPrivate
		case sixTo4.Contains(ip):
			return Classify(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
		}
	}
	for _, n := range refusedNets {
		if n.prefix.Contains(ip) {
			return n.kind
		}
	}
	return ""
}

// internalName classifies names that always mean an internal destination.
func internalName(host string) string {
	switch {
	case host == "localhost" || strings.HasSuffix(host, ".localhost") || host == "localhost.localdomain":
		return kindLoopback
	case host == "metadata.google.internal" || host == "metadata.goog" || host == "metadata" ||
		host == "instance-data" || strings.HasPrefix(host, "instance-data.") && strings.HasSuffix(host, ".internal"):
		return kindMetadata
	}
	return ""
}

// ParseHostIP reads host as an IP address the way the system resolver
// would: IPv6 literals, and the IPv4 forms inet_aton accepts besides the
// dotted quad (2130706433, 0x7f000001, 0177.0.0.1, 127.1).
func ParseHostIP(host string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(host); err == nil {
		return a, true
	}
	parts := strings.Split(host, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	vals := make([]uint64, len(parts))
	for i, s := range parts {
		v, ok := parseInetPart(s)
		if !ok {
			return netip.Addr{}, false
		}
		vals[i] = v
	}
	var n uint64
	last := len(vals) - 1
	for i := 0; i < last; i++ {
		if vals[i] > 0xff {
			return netip.Addr{}, false
		}
		n |= vals[i] << (8 * (3 - i))
	}
	if vals[last] >= 1<<(8*(4-last)) {
		return netip.Addr{}, false
	}
	n |= vals[last]
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true
}

func parseInetPart(s string) (uint64, bool) {
	base := 10
	switch {
	case s == "":
		return 0, false
	case strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X"):
		base, s = 16, s[2:]
		if s == "" {
			return 0, true // "0x" alone is 0 to inet_aton
		}
	case len(s) > 1 && s[0] == '0':
		base, s = 8, s[1:]
	}
	v, err := strconv.ParseUint(s, base, 32)
	return v, err == nil
}

// looksNumeric: a host made only of digits, dots and hex markers that is no
// valid address (e.g. 999999999999) is refused rather than guessed at.
func looksNumeric(host string) bool {
	last := host[strings.LastIndex(host, ".")+1:]
	if last == "" {
		return false
	}
	for _, c := range strings.ToLower(last) {
		if !(c >= '0' && c <= '9' || c == 'x' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return last[0] >= '0' && last[0] <= '9'
}

// DialContext connects to addr ("host:port") if the policy admits every
// address it connects to: a name on the allow list is trusted as it
// resolves (except to metadata services); any other name is resolved, each
// address checked, and only admitted ones dialled, through a net.Dialer
// whose Control checks the socket's address once more.
func (p *Policy) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	name := strings.TrimSuffix(strings.ToLower(host), ".")
	trusted := p.nameAllowed(name, port)
	var addrs []netip.Addr
	if a, ok := ParseHostIP(name); ok {
		addrs = []netip.Addr{a}
	} else {
		if why := internalName(name); !trusted && why != "" && (why != kindLoopback || !p.allowLoopback) {
			return nil, refused("%s is %s; resume webhooks may not reach it%s", name, why, allowHint)
		}
		addrs, err = p.lookup(ctx, "ip", host)
		if err != nil {
			return nil, err
		}
	}
	var firstRefusal error
	var ok []netip.Addr
	for _, a := range addrs {
		if err := p.admit(a, port, name, trusted); err != nil {
			if firstRefusal == nil {
				firstRefusal = err
			}
			continue
		}
		ok = append(ok, a)
	}
	if len(ok) == 0 {
		if firstRefusal == nil {
			firstRefusal = fmt.Errorf("%s resolves to no address", host)
		}
		return nil, firstRefusal
	}
	d := net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second,
		Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return refused("cannot check the address %s", address)
			}
			return p.admit(ap.Addr(), port, name, trusted)
		}}
	var last error
	for _, a := range ok {
		c, err := d.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return c, nil
		}
		last = err
	}
	return nil, last
}

func (p *Policy) admit(a netip.Addr, port, name string, trusted bool) error {
	if trusted {
		if Classify(a) == kindMetadata {
			return p.checkAddr(a, port, name)
		}
		return nil
	}
	return p.checkAddr(a, port, name)
}

// Client is an HTTP client that reaches only what the policy admits and
// never follows redirects: the 3xx response is returned as it is, since a
// redirect could send the signed body anywhere. It does
// not use HTTP(S)_PROXY: every address must be checked by the bridge.
func (p *Policy) Client(timeout time.Duration) *http.Client {
	tr := &http.Transport{
		DialContext:           p.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   8,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	return &http.Client{Transport: tr, Timeout: timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}
