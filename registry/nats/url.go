package nats

import (
	"net"
	"strconv"
	"strings"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/registry/nats/hub"
)

// DefaultNamespace is the namespace of a URL that names none.
const DefaultNamespace = hub.DefaultNamespace

// DefaultPort is the client port of a URL's host that names none.
const DefaultPort = 4222

// URL is a parsed nats://[user:pass@]host:port[,host:port…][/NAMESPACE].
type URL struct {
	User, Password string
	HasPassword    bool
	// Servers are host:port pairs, in the order given.
	Servers   []string
	Namespace string
	raw       string
}

// ParseURL reads a NATS backend URL (docs/MANY-MACHINES.md). Anything it cannot
// read is a usage error (exit 1) naming the URL with its password masked.
func ParseURL(raw string) (*URL, error) {
	u := &URL{raw: raw}
	bad := func(format string, args ...any) error {
		return coord.Errorf(coord.CodeUsage, "backend %s: "+format, append([]any{Redact(raw)}, args...)...).
			WithHint("write nats://[user:pass@]host:port[,host:port…][/NAMESPACE]")
	}
	rest, ok := strings.CutPrefix(raw, "nats://")
	if !ok {
		return nil, bad("not a nats:// URL")
	}
	if strings.ContainsAny(rest, "?#") {
		return nil, bad("a NATS URL takes no query or fragment")
	}
	hosts, ns, hasNS := strings.Cut(rest, "/")
	if i := strings.LastIndexByte(hosts, '@'); i >= 0 {
		info := hosts[:i]
		hosts = hosts[i+1:]
		user, pass, hasPass := strings.Cut(info, ":")
		var err error
		if u.User, err = unescape(user); err != nil || u.User == "" {
			return nil, bad("the user name is empty or badly escaped")
		}
		if u.Password, err = unescape(pass); err != nil {
			return nil, bad("the password is badly escaped")
		}
		u.HasPassword = hasPass
	}
	if hosts == "" {
		return nil, bad("no host")
	}
	for _, h := range strings.Split(hosts, ",") {
		hp, err := hostPort(h)
		if err != nil {
			return nil, bad("%v", err)
		}
		u.Servers = append(u.Servers, hp)
	}
	if hasNS {
		ns = strings.TrimSuffix(ns, "/")
		if err := ValidNamespace(ns); err != nil {
			return nil, bad("%v", err)
		}
		u.Namespace = ns
	} else {
		u.Namespace = DefaultNamespace
	}
	return u, nil
}

// ValidNamespace checks a namespace: [A-Za-z0-9_-]{1,32}.
func ValidNamespace(ns string) error { return hub.ValidNamespace(ns) }

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// hostPort checks one host[:port] and returns it with its port.
func hostPort(h string) (string, error) {
	if h == "" {
		return "", coord.Errorf(coord.CodeUsage, "an empty host in the list")
	}
	host, port := h, ""
	if strings.HasPrefix(h, "[") { // [v6]:port
		end := strings.IndexByte(h, ']')
		rest := h[end+1:]
		if end < 0 || rest != "" && !strings.HasPrefix(rest, ":") || net.ParseIP(h[1:end]) == nil {
			return "", coord.Errorf(coord.CodeUsage, "host %q is not an [IPv6]:port address", h)
		}
		host, port = h[1:end], strings.TrimPrefix(rest, ":")
	} else {
		if i := strings.LastIndexByte(h, ':'); i >= 0 {
			host, port = h[:i], h[i+1:]
		}
		if host == "" || strings.ContainsAny(host, " \t/\\@:[]%") {
			return "", coord.Errorf(coord.CodeUsage, "host %q is not a host name or address", h)
		}
	}
	p := DefaultPort
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return "", coord.Errorf(coord.CodeUsage, "port %q of %q is not a number from 1 to 65535", port, h)
		}
		p = n
	}
	return net.JoinHostPort(host, strconv.Itoa(p)), nil
}

// unescape undoes %XX escapes in user info.
func unescape(s string) (string, error) {
	if !strings.Contains(s, "%") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", coord.Errorf(coord.CodeUsage, "bad escape")
		}
		n, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
		if err != nil {
			return "", coord.Errorf(coord.CodeUsage, "bad escape")
		}
		b.WriteByte(byte(n))
		i += 2
	}
	return b.String(), nil
}

// String is the URL with its password masked, as every message names it.
func (u *URL) String() string {
	var b strings.Builder
	b.WriteString("nats://")
	if u.User != "" {
		b.WriteString(u.User)
		if u.HasPassword {
			b.WriteString(":xxxxx")
		}
		b.WriteByte('@')
	}
	b.WriteString(strings.Join(u.Servers, ","))
	b.WriteString("/" + u.Namespace)
	return b.String()
}

// serverURLs are the servers as nats.go takes them, without credentials.
func (u *URL) serverURLs() string {
	out := make([]string, len(u.Servers))
	for i, s := range u.Servers {
		out[i] = "nats://" + s
	}
	return strings.Join(out, ",")
}

// Redact masks the password of a URL for messages, whether or not it
// parses: everything between the first ':' after "//" and the last '@'
// before the path.
func Redact(raw string) string {
	i := strings.Index(raw, "//")
	if i < 0 {
		return raw
	}
	rest := raw[i+2:]
	end := len(rest)
	if j := strings.IndexByte(rest, '/'); j >= 0 {
		end = j
	}
	at := strings.LastIndexByte(rest[:end], '@')
	if at < 0 {
		return raw
	}
	c := strings.IndexByte(rest[:at], ':')
	if c < 0 {
		return raw
	}
	return raw[:i+2] + rest[:c] + ":xxxxx" + rest[at:]
}
