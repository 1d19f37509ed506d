package main

// The HTTP transport of both serving modes (--http): MCP Streamable HTTP at /mcp, the web
// page, /metrics and /healthz.

import (
	"context"

	"github.com/mark3labs/mcp-go/server"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/guide/guide/internal/httpserve"
	"github.com/guide/guide/internal/mcpserver"
	"github.com/guide/guide/internal/metrics"
	"github.com/guide/guide/internal/query"
	"github.com/guide/guide/internal/web"
)

// serveHTTP serves MCP, the web page, the metrics and the health check over HTTP until ctx
// ends.
func (m *Main) serveHTTP(ctx context.Context) error {
	token, err := httpserve.ReadToken(m.Config.TokenFile, tokenEnv)
	if err != nil {
		return err
	}
	met := metrics.New(m.srv.Freshness, m.Config.ReadyMaxLag)
	m.metrics = met
	met.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "guide_session_documents",
		Help: "Documents attached to MCP sessions, in the catalog.",
	}, func() float64 { return float64(m.sessions.Documents()) }))
	m.mcp.Use(mcpserver.ToolObserver(met.ObserveTool))
	hs := &httpserve.Server{
		Addr: m.Config.HTTPAddr, Token: token, AllowedHosts: m.Config.AllowedHosts, AllowedOrigins: m.Config.AllowedOrigins,
		TLSCert: m.Config.TLSCert, TLSKey: m.Config.TLSKey, MaxBodyBytes: m.Config.MaxBody, ShutdownWait: m.Config.ShutdownWait,
		// The transport's own localhost check knows no --allowed-host; httpserve checks Host.
		MCP: m.srv.HTTPHandler(m.mcp, server.WithEndpointPath("/mcp"),
			server.WithDisableLocalhostProtection(true),
			server.WithSessionIdleTTL(m.sessionTTL()), // which ends an idle session here too
			server.WithStreamableHTTPLogger(m.Logger)),
		Metrics: met.Handler(),
		Web: (&web.Server{Project: m.project, Catalog: m.catalog, Index: m.index, Sessions: m.sessions,
			Limits: query.Limits{MaxChars: m.Config.MaxChars}, Freshness: m.srv.Freshness, Changes: m.srv.Changes,
			Token: token, Secure: m.Config.TLSCert != "", MaxBodyBytes: m.Config.MaxBody, Logger: m.Logger,
			SignInsPerMinute: signInsPerMinute(m.Config.SignInsPerMin)}).Handler(),
		Health: func(ctx context.Context) (bool, any) {
			h := m.srv.Freshness.Health(ctx, m.Config.ReadyMaxLag)
			return h.Ready, h
		},
		Logger: m.Logger,
	}
	if err := hs.Listen(); err != nil {
		return err
	}
	m.addr = hs.ListenAddr()
	m.Logger.Info("serving MCP over Streamable HTTP and the web page", "url", hs.URL()+"/mcp", "page", hs.URL()+"/", "project", m.project,
		"token", token != "", "tls", m.Config.TLSCert != "")
	close(m.Ready)
	return hs.Serve(ctx)
}

// signInsPerMinute maps --signin-limit to web.Server's setting, where 0 means the default
// and a negative value no limit.
func signInsPerMinute(flag int) int {
	if flag <= 0 {
		return -1
	}
	return flag
}
