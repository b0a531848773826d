package hub

import "github.com/rotd/coordination/coord"

// DefaultNamespace is the project namespace of a nats:// URL that names
// none.
const DefaultNamespace = "default"

// ValidNamespace checks a namespace: [A-Za-z0-9_-]{1,32}.
func ValidNamespace(ns string) error {
	ok := len(ns) >= 1 && len(ns) <= 32
	for i := 0; ok && i < len(ns); i++ {
		c := ns[i]
		ok = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
	}
	if !ok {
		return coord.Errorf(coord.CodeUsage, "namespace %q is invalid: use 1 to 32 letters, digits, _ and -", clipNS(ns))
	}
	return nil
}

func clipNS(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
