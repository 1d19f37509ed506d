package broker_test

import (
	"net"
	"strings"
	"testing"

	"github.com/guide/guide/internal/broker"
	"github.com/guide/guide/internal/testkit"
)

// TestOpenPortTaken: an embedded server whose address is taken fails at once, saying so.
func TestOpenPortTaken(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	testkit.NoErr(t, err, "listen")
	defer l.Close()
	b := &broker.Broker{StoreDir: t.TempDir(), Listen: l.Addr().String(), Logger: testkit.Logger()}
	err = b.Open()
	if err == nil {
		_ = b.Close()
		t.Fatal("Open succeeded on a taken address")
	}
	if !strings.Contains(err.Error(), "already in use") || !strings.Contains(err.Error(), l.Addr().String()) {
		t.Fatalf("error does not say the address is taken: %v", err)
	}
}
