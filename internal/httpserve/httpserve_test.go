package httpserve

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// echo is an MCP stand-in: it answers 200 with the body it read.
var echo = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	_, _ = w.Write(b)
})

// start listens and serves s until the test ends.
func start(t *testing.T, s *Server) (base string, stop func() error) {
	t.Helper()
	if err := s.Listen(); err != nil {
		t.Fatalf("listen: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	var once bool
	var result error
	stop = func() error {
		if !once {
			once = true
			cancel()
			result = <-done
		}
		return result
	}
	t.Cleanup(func() { _ = stop() })
	return s.URL(), stop
}

func do(t *testing.T, c *http.Client, method, url string, body string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

func wantStatus(t *testing.T, res *http.Response, body string, want int) {
	t.Helper()
	if res.StatusCode != want {
		t.Fatalf("status %d, want %d: %s", res.StatusCode, want, body)
	}
}

func TestListen(t *testing.T) {
	t.Run("ErrNoTokenOnNonLoopback", func(t *testing.T) {
		err := (&Server{Addr: "0.0.0.0:0", MCP: echo}).Listen()
		if !errors.Is(err, ErrNoToken) {
			t.Fatalf("got %v, want ErrNoToken", err)
		}
	})
	t.Run("NonLoopbackWithToken", func(t *testing.T) {
		s := &Server{Addr: "0.0.0.0:0", Token: "secret", MCP: echo}
		if err := s.Listen(); err != nil {
			t.Fatal(err)
		}
		_ = s.ln.Close()
	})
	t.Run("ErrTLSHalf", func(t *testing.T) {
		if err := (&Server{Addr: "127.0.0.1:0", TLSCert: "x.pem"}).Listen(); err == nil {
			t.Fatal("a certificate without a key was accepted")
		}
	})
}

func TestToken(t *testing.T) {
	s := &Server{Addr: "127.0.0.1:0", Token: "s3cret", MCP: echo, Metrics: echo}
	base, _ := start(t, s)
	c := http.DefaultClient
	for name, tc := range map[string]struct {
		path, auth string
		want       int
	}{
		"Unauthorized":        {"/mcp", "", 401},
		"UnauthorizedWrong":   {"/mcp", "Bearer s3cre", 401},
		"UnauthorizedScheme":  {"/mcp", "Basic s3cret", 401},
		"Authorized":          {"/mcp", "Bearer s3cret", 200},
		"AuthorizedLowerCase": {"/mcp", "bearer s3cret", 200},
		"AuthorizedUpperCase": {"/mcp", "BEARER  s3cret", 200},
		"MetricsLowerCase":    {"/metrics", "bearer s3cret", 200},
		"MetricsUnauthorized": {"/metrics", "", 401},
		"MetricsAuthorized":   {"/metrics", "Bearer s3cret", 200},
		"HealthzOpen":         {"/healthz", "", 200},
	} {
		t.Run(name, func(t *testing.T) {
			hdr := map[string]string{}
			if tc.auth != "" {
				hdr["Authorization"] = tc.auth
			}
			res, body := do(t, c, "POST", base+tc.path, "{}", hdr)
			wantStatus(t, res, body, tc.want)
			if tc.want == 401 && !strings.HasPrefix(res.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Fatalf("WWW-Authenticate %q", res.Header.Get("WWW-Authenticate"))
			}
		})
	}
}

func TestHostAndOrigin(t *testing.T) {
	s := &Server{Addr: "127.0.0.1:0", MCP: echo, Metrics: echo,
		AllowedHosts: []string{"guide.internal"}, AllowedOrigins: []string{"https://app.example.com"}}
	base, _ := start(t, s)
	for _, tc := range []struct {
		name string
		path string // "/mcp" when ""
		hdr  map[string]string
		want int
	}{
		{name: "LoopbackHost", hdr: map[string]string{}, want: 200},
		{name: "LocalhostHost", hdr: map[string]string{"Host": "localhost:9"}, want: 200},
		{name: "AllowedHost", hdr: map[string]string{"Host": "guide.internal:8080"}, want: 200},
		{name: "ErrRebindHost", hdr: map[string]string{"Host": "evil.example.com"}, want: 403},
		{name: "LoopbackOrigin", hdr: map[string]string{"Origin": "http://localhost:3000"}, want: 200},
		{name: "AllowedOrigin", hdr: map[string]string{"Origin": "https://app.example.com"}, want: 200},
		{name: "ErrForeignOrigin", hdr: map[string]string{"Origin": "https://evil.example.com"}, want: 403},
		{name: "ErrNullOrigin", hdr: map[string]string{"Origin": "null"}, want: 403},
		// The operations endpoints are checked too; probes may come by IP address.
		{name: "ErrRebindHostOnHealthz", path: "/healthz", hdr: map[string]string{"Host": "evil.example.com"}, want: 403},
		{name: "ErrRebindHostOnMetrics", path: "/metrics", hdr: map[string]string{"Host": "evil.example.com"}, want: 403},
		{name: "ErrForeignOriginOnHealthz", path: "/healthz", hdr: map[string]string{"Origin": "https://evil.example.com"}, want: 403},
		{name: "ErrForeignOriginOnMetrics", path: "/metrics", hdr: map[string]string{"Origin": "https://evil.example.com"}, want: 403},
		{name: "IPHostOnHealthz", path: "/healthz", hdr: map[string]string{"Host": "10.1.2.3:8080"}, want: 200},
		{name: "AllowedHostOnMetrics", path: "/metrics", hdr: map[string]string{"Host": "guide.internal"}, want: 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path
			if path == "" {
				path = "/mcp"
			}
			res, body := do(t, http.DefaultClient, "POST", base+path, "{}", tc.hdr)
			wantStatus(t, res, body, tc.want)
		})
	}
}

func TestBodyLimit(t *testing.T) {
	s := &Server{Addr: "127.0.0.1:0", MCP: echo, MaxBodyBytes: 1000}
	base, _ := start(t, s)
	for _, tc := range []struct {
		name string
		size int
		want int
	}{
		{"AtTheLimit", 1000, 200},
		{"ErrOverTheLimit", 1001, 413},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, body := do(t, http.DefaultClient, "POST", base+"/mcp", strings.Repeat("x", tc.size), nil)
			wantStatus(t, res, body, tc.want)
		})
	}

	// A chunked body declares no length: the read fails past the limit.
	req, _ := http.NewRequest("POST", base+"/mcp", io.MultiReader(strings.NewReader(strings.Repeat("y", 5000))))
	req.ContentLength = -1
	r2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r2.Body)
	r2.Body.Close()
	if r2.StatusCode == 200 {
		t.Fatalf("a chunked body over the limit was read whole: %d bytes", len(b))
	}
}

func TestHealthz(t *testing.T) {
	var ready atomic.Bool
	s := &Server{Addr: "127.0.0.1:0", MCP: echo, Health: func(context.Context) (bool, any) {
		return ready.Load(), map[string]any{"lag": 42}
	}}
	base, _ := start(t, s)
	res, body := do(t, http.DefaultClient, "GET", base+"/healthz", "", nil)
	wantStatus(t, res, body, 503)
	if !strings.Contains(body, `"lag":42`) {
		t.Fatalf("body %s does not report the lag", body)
	}
	ready.Store(true)
	res, body = do(t, http.DefaultClient, "GET", base+"/healthz", "", nil)
	wantStatus(t, res, body, 200)
}

// TestGracefulShutdownFinishesInFlight: a call in flight when shutdown begins completes,
// while an open event stream (GET) is ended so that shutdown does not wait for it.
func TestGracefulShutdownFinishesInFlight(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	streamEnded := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			w.WriteHeader(200)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			close(streamEnded)
			return
		}
		close(entered)
		<-release
		_, _ = io.WriteString(w, "finished")
	})
	s := &Server{Addr: "127.0.0.1:0", MCP: h, ShutdownWait: time.Minute}
	base, stop := start(t, s)

	streamRes, err := http.Get(base + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	defer streamRes.Body.Close()

	type reply struct {
		status int
		body   string
		err    error
	}
	got := make(chan reply, 1)
	go func() {
		res, err := http.Post(base+"/mcp", "application/json", strings.NewReader("{}"))
		if err != nil {
			got <- reply{err: err}
			return
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		got <- reply{status: res.StatusCode, body: string(b)}
	}()
	<-entered
	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	<-streamEnded // shutdown began and ended the stream; the call is still in flight
	select {
	case err := <-stopped:
		t.Fatalf("shutdown returned (%v) before the in-flight call finished", err)
	default:
	}
	close(release)
	r := <-got
	if r.err != nil || r.status != 200 || r.body != "finished" {
		t.Fatalf("in-flight call: %+v", r)
	}
	if err := <-stopped; err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if _, err := http.Post(base+"/mcp", "application/json", strings.NewReader("{}")); err == nil {
		t.Fatal("a new call was accepted after shutdown")
	}
}

func TestTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, pool := selfSigned(t, dir)
	s := &Server{Addr: "127.0.0.1:0", MCP: echo, TLSCert: certFile, TLSKey: keyFile}
	base, _ := start(t, s)
	if !strings.HasPrefix(base, "https://") {
		t.Fatalf("URL %s", base)
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	res, body := do(t, c, "POST", base+"/mcp", "hello", nil)
	wantStatus(t, res, body, 200)
	if body != "hello" {
		t.Fatalf("body %q", body)
	}
	// Plain HTTP to the TLS port gets no answer from the MCP handler.
	plain := strings.Replace(base, "https://", "http://", 1)
	if res, err := http.Post(plain+"/mcp", "text/plain", strings.NewReader("x")); err == nil && res.StatusCode == 200 {
		t.Fatal("plain HTTP was served on the TLS port")
	}
}

func TestReadToken(t *testing.T) {
	dir := t.TempDir()
	t.Run("FromFile", func(t *testing.T) {
		p := filepath.Join(dir, "token")
		if err := os.WriteFile(p, []byte("abc\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := ReadToken(p, "GUIDE_TEST_TOKEN_UNSET")
		if err != nil || got != "abc" {
			t.Fatalf("got %q, %v", got, err)
		}
	})
	t.Run("ErrWorldReadable", func(t *testing.T) {
		p := filepath.Join(dir, "open")
		if err := os.WriteFile(p, []byte("abc"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadToken(p, ""); err == nil {
			t.Fatal("a token file readable by others was accepted")
		}
	})
	t.Run("FromEnv", func(t *testing.T) {
		t.Setenv("GUIDE_TEST_TOKEN", " xyz ")
		got, err := ReadToken("", "GUIDE_TEST_TOKEN")
		if err != nil || got != "xyz" {
			t.Fatalf("got %q, %v", got, err)
		}
	})
}

// selfSigned writes a certificate for 127.0.0.1 and its key, and returns a pool trusting it.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "guide test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, IsCA: true, BasicConstraintsValid: true,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}
