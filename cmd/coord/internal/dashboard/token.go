package dashboard

import (
	"crypto/rand"
	"encoding/base64"
	"math"
	"strings"

	"github.com/rotd/coordination/coord"
)

// The dashboard's token guards every read of the project and, when the
// page may act, the supervisor's acts. A token a person chose is only as
// good as it is hard to guess, so the front end refuses one that is blank
// or that TokenBits judges below MinTokenBits, and a wrong guess is
// answered more slowly (the limiter, limit.go): together they put the
// token out of reach of guessing, on any address.

// MinTokenBits is the least entropy a token may have, as TokenBits
// estimates it.
const MinTokenBits = 128

// GenerateToken is the token value that asks for a fresh one
// (--token generate): NewToken's, printed in the page's address.
const GenerateToken = "generate"

// NewToken is a fresh token (--token generate, --allow-actions): 256
// random bits, URL-safe.
func NewToken() string {
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand: panics on a broken system source)
	return base64.RawURLEncoding.EncodeToString(b)
}

// alphabets are the sets of characters tokens are usually drawn from,
// smallest first (per set, how many characters it has).
var alphabets = []struct {
	size int
	has  func(c byte) bool
}{
	{10, func(c byte) bool { return c >= '0' && c <= '9' }},
	{16, func(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' }},
	{16, func(c byte) bool { return c >= '0' && c <= '9' || c >= 'A' && c <= 'F' }},
	{26, func(c byte) bool { return c >= 'a' && c <= 'z' }},
	{26, func(c byte) bool { return c >= 'A' && c <= 'Z' }},
	{36, func(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' }},
	{36, func(c byte) bool { return c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' }},
	{52, func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }},
	{62, isAlnum},
	{64, func(c byte) bool { return isAlnum(c) || c == '-' || c == '_' }},             // base64url
	{65, func(c byte) bool { return isAlnum(c) || strings.IndexByte("+/=", c) >= 0 }}, // base64, padded
	{94, func(c byte) bool { return c > ' ' && c < 0x7f }},                            // printable ASCII
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// minDistinct: a token drawn at random from any of the alphabets, long
// enough for MinTokenBits, holds at least this many different characters
// but with a negligible chance; fewer means it was not drawn at random
// ("aaaa…").
const minDistinct = 8

// TokenBits estimates the entropy of a token in bits: its length times
// the bits of one character of the smallest usual alphabet that holds all
// of its characters (decimal digits, hexadecimal, one case of letters,
// letters and digits, base64, printable ASCII), as if each character had
// been drawn at random from it; 0 when it holds fewer than minDistinct
// different characters, or anything but printable ASCII (a token travels
// in a header and in the page's address). It is an upper bound for a
// token a person made up: the only token known to be strong is one drawn
// at random (NewToken, or `openssl rand -hex 16`).
func TokenBits(t string) float64 {
	distinct := map[byte]bool{}
	for i := 0; i < len(t); i++ {
		distinct[t[i]] = true
	}
	if len(distinct) < minDistinct {
		return 0
	}
	for _, a := range alphabets {
		all := true
		for c := range distinct {
			if !a.has(c) {
				all = false
				break
			}
		}
		if all {
			return float64(len(t)) * math.Log2(float64(a.size))
		}
	}
	return 0
}

// CheckToken refuses a token the dashboard would be guarded by when it is
// blank or weaker than MinTokenBits (exit 1), naming where it came from
// (--token or COORD_DASHBOARD_TOKEN) and how to get a strong one.
func CheckToken(from, token string) error {
	const how = "pass --token generate for a fresh one (printed in the page's address), or a random one such as --token \"$(openssl rand -hex 16)\""
	if strings.TrimSpace(token) == "" {
		return coord.Errorf(coord.CodeUsage, "%s is blank: the dashboard would be open to anyone", from).WithHint("%s", how)
	}
	if bits := TokenBits(token); bits < MinTokenBits {
		return coord.Errorf(coord.CodeUsage, "%s is too easy to guess: about %d bits of entropy, at least %d needed", from, int(bits), MinTokenBits).
			WithHint("%s", how)
	}
	return nil
}
