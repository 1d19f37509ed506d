package web

import (
	"strconv"
	"testing"
	"time"
)

// clock is a time that a test moves.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// TestSignInLimit: each address has its own allowance of wrong tokens, which comes back
// with time; an IPv6 host's /64 is one address.
func TestSignInLimit(t *testing.T) {
	c := &clock{t: time.Unix(1700000000, 0)}
	l := newSignInLimit(3, c.now)
	for i := range 3 {
		if ok, _ := l.Allowed("192.0.2.1"); !ok {
			t.Fatalf("attempt %d refused; the allowance is 3", i+1)
		}
		l.Failed("192.0.2.1")
	}
	ok, wait := l.Allowed("192.0.2.1")
	if ok || wait != 20*time.Second {
		t.Fatalf("after 3 wrong tokens: allowed %v, wait %v; want refused for 20s (3 a minute)", ok, wait)
	}
	if ok, _ := l.Allowed("192.0.2.2"); !ok {
		t.Fatal("another address refused")
	}
	c.t = c.t.Add(20 * time.Second)
	if ok, _ := l.Allowed("192.0.2.1"); !ok {
		t.Fatal("refused once a token came back")
	}
	l.Failed("192.0.2.1")
	if ok, _ := l.Allowed("192.0.2.1"); ok {
		t.Fatal("allowed with the allowance spent again")
	}

	a, b := clientAddress("[2001:db8:1:2::1]:4000"), clientAddress("[2001:db8:1:2:ffff::9]:5000")
	if a != b || a != "2001:db8:1:2::/64" {
		t.Errorf("IPv6 addresses of one /64: %q and %q", a, b)
	}
	if got := clientAddress("[::ffff:192.0.2.7]:80"); got != "192.0.2.7" {
		t.Errorf("IPv4-mapped address: %q", got)
	}

	if ok, _ := (*signInLimit)(nil).Allowed("x"); !ok {
		t.Error("no limit refused")
	}
	if ok, _ := newSignInLimit(-1, c.now).Allowed("x"); !ok {
		t.Error("a negative limit refused")
	}
}

// TestSignInLimitRemembersBoundedAddresses: beyond maxLimitedClients addresses, those whose
// allowance is whole again are forgotten, and the rest share one allowance.
func TestSignInLimitRemembersBoundedAddresses(t *testing.T) {
	c := &clock{t: time.Unix(1700000000, 0)}
	l := newSignInLimit(1, c.now)
	for i := range maxLimitedClients {
		l.Failed(strconv.Itoa(i))
	}
	l.Failed("new")
	if len(l.clients) > maxLimitedClients {
		t.Fatalf("%d addresses remembered; the bound is %d", len(l.clients), maxLimitedClients)
	}
	if ok, _ := l.Allowed("another"); ok {
		t.Fatal("an address beyond the bound has its own allowance while the shared one is spent")
	}
	c.t = c.t.Add(time.Minute)
	l.Failed("later")
	if _, ok := l.clients["later"]; !ok || len(l.clients) > maxLimitedClients {
		t.Fatalf("once allowances came back, the new address is not remembered (%d remembered)", len(l.clients))
	}
}
