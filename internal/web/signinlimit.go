package web

import (
	"math"
	"net"
	"net/netip"
	"sync"
	"time"
)

// DefaultSignInsPerMinute is how many wrong tokens one client address may send the
// sign-in form a minute, after a first burst of as many.
const DefaultSignInsPerMinute = 10

// maxLimitedClients bounds the addresses the sign-in limit remembers; beyond it, the
// addresses it does not know share one allowance.
const maxLimitedClients = 1 << 16

// signInLimit is a token bucket per client address: each wrong token takes one; they come
// back at perMinute a minute, up to perMinute. An address with none left is refused
// every sign-in, right token or not, until one comes back: otherwise the limit would
// only slow a guesser down, never stop one.
type signInLimit struct {
	perMinute float64
	now       func() time.Time

	mu      sync.Mutex
	clients map[string]*bucket
	shared  bucket // for addresses beyond maxLimitedClients
}

type bucket struct {
	tokens float64
	at     time.Time
}

func newSignInLimit(perMinute int, now func() time.Time) *signInLimit {
	if now == nil {
		now = time.Now
	}
	return &signInLimit{perMinute: float64(perMinute), now: now, clients: map[string]*bucket{}}
}

// refill brings b up to now.
func (l *signInLimit) refill(b *bucket, now time.Time) {
	if b.at.IsZero() {
		b.tokens, b.at = l.perMinute, now
		return
	}
	b.tokens = math.Min(l.perMinute, b.tokens+now.Sub(b.at).Minutes()*l.perMinute)
	b.at = now
}

// bucketOf returns the client's bucket, making room for it when needed.
func (l *signInLimit) bucketOf(client string, now time.Time) *bucket {
	if b, ok := l.clients[client]; ok {
		return b
	}
	if len(l.clients) >= maxLimitedClients {
		for k, b := range l.clients { // forget the addresses whose allowance is whole again
			if l.refill(b, now); b.tokens >= l.perMinute {
				delete(l.clients, k)
			}
		}
		if len(l.clients) >= maxLimitedClients {
			return &l.shared
		}
	}
	b := &bucket{}
	l.clients[client] = b
	return b
}

// Allowed reports whether client may try a token now, and if not, how long until it may.
func (l *signInLimit) Allowed(client string) (bool, time.Duration) {
	if l == nil || l.perMinute <= 0 {
		return true, 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	b := l.bucketOf(client, now)
	l.refill(b, now)
	if b.tokens >= 1 {
		return true, 0
	}
	wait := time.Duration((1 - b.tokens) / l.perMinute * float64(time.Minute))
	return false, max(wait, time.Second)
}

// Failed takes one of client's allowance for a wrong token.
func (l *signInLimit) Failed(client string) {
	if l == nil || l.perMinute <= 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	b := l.bucketOf(client, now)
	l.refill(b, now)
	b.tokens = math.Max(0, b.tokens-1)
}

// clientAddress is the address a request came from, as the limit counts it: an IPv4
// address, or an IPv6 address's /64 (what one host is usually given).
func clientAddress(remoteAddr string) string {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	a = a.Unmap()
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}
