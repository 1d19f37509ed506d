// Package broker gives a process its NATS connection: to an existing server or cluster,
// or to a NATS server with JetStream embedded in the process.
package broker

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// Broker is a NATS connection, and the embedded server behind it when there is one.
// Set the fields, then call Open.
type Broker struct {
	// URL of an existing NATS server or cluster (comma-separated). Empty: embed a server.
	URL string
	// Options for connecting to URL: credentials file, TLS and so on.
	Options []nats.Option

	// For an embedded server: where JetStream stores its files (required),
	// and the address it listens on ("" = in-process only, no network listener).
	StoreDir string
	Listen   string
	// Token, when set, is the secret every client of the embedded server must present:
	// it listens on loopback for the project's other processes, and only for them.
	Token string
	// SyncAlways makes the embedded server fsync every write (slower; survives power loss).
	SyncAlways bool

	Name   string // client name, shown by the server
	Logger *slog.Logger

	Conn *nats.Conn
	// Server is the embedded server as Open started it; one whose store failed is
	// replaced by a new one on the same store and port (store.go): current returns it.
	Server *server.Server

	store    *storeWatch     // the embedded server's store (store.go)
	opts     *server.Options // the embedded server's, to start it again
	serverMu sync.Mutex      // guards cur
	cur      *server.Server
}

// current is the embedded server running now.
func (b *Broker) current() *server.Server {
	b.serverMu.Lock()
	defer b.serverMu.Unlock()
	return b.cur
}

// InProcessConn connects the broker's own connection to the embedded server running now,
// and again to the one that replaces it.
func (b *Broker) InProcessConn() (net.Conn, error) {
	ns := b.current()
	if ns == nil {
		return nil, errors.New("embedded NATS: not running")
	}
	return ns.InProcessConn()
}

// Open starts the embedded server if needed and connects.
func (b *Broker) Open() error {
	if b.Logger == nil {
		b.Logger = slog.Default()
	}
	opts := append([]nats.Option{
		nats.Name(b.Name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.ReconnectBufSize(64 << 20),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				b.Logger.Warn("nats disconnected", "err", err)
			}
		}),
		nats.ReconnectHandler(func(c *nats.Conn) { b.Logger.Info("nats reconnected", "url", c.ConnectedUrl()) }),
	}, b.Options...)
	if b.URL != "" {
		nc, err := nats.Connect(b.URL, opts...)
		if err != nil {
			return fmt.Errorf("connect to NATS at %s: %w", b.URL, err)
		}
		b.Conn = nc
		return nil
	}
	if b.StoreDir == "" {
		return errors.New("embedded NATS needs a store directory")
	}
	so := &server.Options{
		ServerName: "guide-embedded",
		JetStream:  true,
		StoreDir:   b.StoreDir,
		NoSigs:     true,
		NoLog:      true,
		MaxPayload: 8 << 20,
		SyncAlways: b.SyncAlways,
		// The disk is the limit. Left to itself the server takes three quarters of the
		// space free when it starts, and refuses every publish past it ("insufficient
		// resources") for good, however much space is freed later.
		JetStreamMaxStore: maxStore,
	}
	if b.Token != "" {
		so.Authorization = b.Token
		opts = append(opts, nats.Token(b.Token))
	}
	if b.Listen == "" {
		so.DontListen = true
	} else {
		host, port, err := net.SplitHostPort(b.Listen)
		if err != nil {
			return fmt.Errorf("listen address %q: %w", b.Listen, err)
		}
		so.Host = host
		if so.Port, err = strconv.Atoi(port); err != nil {
			return fmt.Errorf("listen address %q: %w", b.Listen, err)
		}
	}
	if !so.DontListen && so.Port > 0 { // 0 and -1 ask for any free port
		// The embedded server, logging nothing, would only time out on a taken port.
		if err := portFree(b.Listen); err != nil {
			return err
		}
	}
	ns, err := startServer(so)
	if err != nil {
		return fmt.Errorf("%w (store %s, listen %q)", err, b.StoreDir, b.Listen)
	}
	b.Server, b.cur, b.opts = ns, ns, so
	nc, err := nats.Connect("", append(opts, nats.InProcessServer(b))...)
	if err != nil {
		ns.Shutdown()
		return fmt.Errorf("connect to embedded NATS: %w", err)
	}
	b.Conn = nc
	b.watchStore()
	return nil
}

// portFree checks that addr can be listened on, and says so plainly when it cannot.
func portFree(addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("cannot listen on %s: the address is already in use (another indexer or NATS server?); stop it, or choose another address with --listen: %w", addr, err)
		}
		return fmt.Errorf("cannot listen on %s: %w", addr, err)
	}
	return l.Close()
}

// startServer starts an embedded server with so and waits until it takes connections.
func startServer(so *server.Options) (*server.Server, error) {
	ns, err := server.NewServer(so)
	if err != nil {
		return nil, fmt.Errorf("embedded NATS: %w", err)
	}
	ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		ns.Shutdown()
		return nil, errors.New("embedded NATS did not start")
	}
	return ns, nil
}

// ClientURL is the address other processes use to reach this broker's embedded server,
// or the URL it connected to.
func (b *Broker) ClientURL() string {
	if b.Server != nil {
		if b.Listen == "" {
			return ""
		}
		return b.current().ClientURL()
	}
	return b.URL
}

// Close drains the connection and stops the embedded server. It reports a failure to
// drain; the connection is closed anyway.
func (b *Broker) Close() error {
	b.stopWatch()
	var err error
	if b.Conn != nil {
		if err = b.Conn.Drain(); errors.Is(err, nats.ErrConnectionClosed) {
			err = nil // closed already: nothing left to drain
		}
		deadline := time.Now().Add(5 * time.Second)
		for !b.Conn.IsClosed() && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		b.Conn.Close()
	}
	if ns := b.current(); ns != nil {
		ns.Shutdown()
		ns.WaitForShutdown()
	}
	return err
}

// Security is how a process proves itself to a NATS deployment and checks the servers.
// Empty fields are left out.
type Security struct {
	Creds   string // credentials file (JWT and NKey seed) of the account
	NKey    string // NKey seed file
	TLSCert string // client certificate, for servers that require mutual TLS
	TLSKey  string
	TLSCA   string // CA that signed the servers' certificates, when not a public one
}

// Options turns the settings into connection options.
func (s Security) Options() ([]nats.Option, error) {
	var opts []nats.Option
	if s.Creds != "" {
		opts = append(opts, nats.UserCredentials(s.Creds))
	}
	if s.NKey != "" {
		o, err := nats.NkeyOptionFromSeed(s.NKey)
		if err != nil {
			return nil, fmt.Errorf("NATS nkey: %w", err)
		}
		opts = append(opts, o)
	}
	if (s.TLSCert == "") != (s.TLSKey == "") {
		return nil, errors.New("NATS TLS needs both a certificate and a key")
	}
	if s.TLSCert != "" {
		opts = append(opts, nats.ClientCert(s.TLSCert, s.TLSKey))
	}
	if s.TLSCA != "" {
		opts = append(opts, nats.RootCAs(s.TLSCA))
	}
	return opts, nil
}

// Flags registers the security settings on a flag set, under the names both binaries use.
func (s *Security) Flags(fs interface {
	StringVar(p *string, name, value, usage string)
}) {
	fs.StringVar(&s.Creds, "nats-creds", "", "NATS credentials file (JWT and seed)")
	fs.StringVar(&s.NKey, "nats-nkey", "", "NATS NKey seed file")
	fs.StringVar(&s.TLSCert, "nats-tls-cert", "", "client certificate for NATS servers that require TLS client auth")
	fs.StringVar(&s.TLSKey, "nats-tls-key", "", "key of --nats-tls-cert")
	fs.StringVar(&s.TLSCA, "nats-tls-ca", "", "CA certificate that signed the NATS servers' certificates")
}
