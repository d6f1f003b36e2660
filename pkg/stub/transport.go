package stub

import (
	"context"
	"fmt"
	stdnet "net"
	"os"
	"strconv"
	"time"

	"github.com/containerd/ttrpc"

	"github.com/nri-handover/nri/api"
	nrinet "github.com/nri-handover/nri/pkg/net"
	"github.com/nri-handover/nri/pkg/net/multiplex"
)

// shutdownNoticeWait bounds how long a refused plugin listens for the
// runtime's Shutdown before it closes the connection itself.
const shutdownNoticeWait = time.Second

// inheritedConn picks up the socket a runtime passes to the plugins it
// launches itself (NRI_PLUGIN_SOCKET holds the file descriptor).
func inheritedConn() (stdnet.Conn, bool, error) {
	env := os.Getenv(api.PluginSocketEnvVar)
	if env == "" {
		return nil, false, nil
	}
	fd, err := strconv.Atoi(env)
	if err != nil {
		return nil, true, fmt.Errorf("invalid %s=%q: %w", api.PluginSocketEnvVar, env, err)
	}
	conn, err := nrinet.NewFdConn(fd)
	if err != nil {
		return nil, true, fmt.Errorf("socket %d from %s: %w", fd, api.PluginSocketEnvVar, err)
	}
	return conn, true, nil
}

// newSession splits conn into the plugin service (served here) and the
// runtime service (called from here), as every NRI peer does, and starts
// serving.
func (s *stub) newSession(ctx context.Context, conn stdnet.Conn) (*session, error) {
	mux := multiplex.Multiplex(conn, multiplex.WithBlockedRead())
	lis, err := mux.Listen(multiplex.PluginServiceConn)
	if err != nil {
		mux.Close()
		return nil, fmt.Errorf("multiplexing the plugin service: %w", err)
	}
	srv, err := ttrpc.NewServer(s.serverOpts...)
	if err != nil {
		lis.Close()
		mux.Close()
		return nil, fmt.Errorf("creating the ttrpc server: %w", err)
	}
	cconn, err := mux.Open(multiplex.RuntimeServiceConn)
	if err != nil {
		srv.Close()
		lis.Close()
		mux.Close()
		return nil, fmt.Errorf("multiplexing the runtime service: %w", err)
	}

	sess := &session{
		mux:       mux,
		lis:       lis,
		srv:       srv,
		cfgC:      make(chan error, 1),
		shutdownC: make(chan struct{}),
		serveDone: make(chan struct{}),
		doneC:     make(chan struct{}),
		stopC:     make(chan struct{}),
	}
	// Our close hook goes last so that a user's WithOnClose in the ttrpc
	// options cannot disable the stub's own cleanup.
	copts := append(append([]ttrpc.ClientOpts{}, s.clientOpts...),
		ttrpc.WithOnClose(func() { go s.teardown(sess) }))
	sess.cli = ttrpc.NewClient(cconn, copts...)
	sess.runtime = api.NewRuntimeClient(sess.cli)
	api.RegisterPluginService(srv, &service{s: s, sess: sess})
	// The mux drops frames for connection IDs nobody opened yet: read only
	// once both services are in place.
	mux.Unblock()

	// Handlers must outlive a Start context that the caller cancels once
	// Start returned.
	serveCtx := context.WithoutCancel(ctx)
	go func() {
		defer close(sess.serveDone)
		_ = srv.Serve(serveCtx, lis)
	}()
	return sess, nil
}

// features lists the protocol features the plugin asks for: none unless it
// opted into handover, so that a plugin written for upstream is treated as
// upstream treats it.
func (s *stub) features() []string {
	if s.handoverOff {
		s.logger.Infof(context.Background(), "plugin %s: handover turned off by $%s; registering as an upstream plugin", s.Name(), HandoverEnvVar)
	}
	if !s.handover {
		return nil
	}
	if s.h.syncRound != nil {
		return []string{api.FeatureHandover, api.FeatureDeltaSync}
	}
	return []string{api.FeatureHandover}
}

// register introduces the plugin and learns what the runtime offers.
func (s *stub) register(ctx context.Context, sess *session) error {
	req := &api.RegisterPluginRequest{
		PluginName:    s.name,
		PluginIdx:     s.idx,
		NRIVersion:    libraryVersion(),
		PluginVersion: s.pluginVersion,
		InstanceId:    s.instanceID,
		Generation:    s.generation,
		Features:      s.features(),
	}
	s.logger.Infof(ctx, "registering plugin %s (version %s, instance %q, generation %d)",
		s.Name(), s.pluginVersion, s.instanceID, s.generation)

	rctx, cancel := context.WithTimeout(ctx, s.RegistrationTimeout())
	defer cancel()
	rpl, err := sess.runtime.RegisterPlugin(rctx, req)
	if err != nil {
		if mentions(err.Error(), s.Name()) { // the runtime's refusal names the plugin
			return fmt.Errorf("registration failed: %w", err)
		}
		return fmt.Errorf("plugin %s: registration failed: %w", s.Name(), err)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	sess.registered = true
	switch {
	case !s.handover:
		// Not asked for: whatever the runtime offers, behave as upstream.
	case rpl.GetNRIVersion() == "":
		s.logger.Infof(ctx, "plugin %s: the runtime does not know NRI handover (upstream NRI); handover unavailable, ready once synchronized", s.Name())
	case api.HasFeature(rpl.GetFeatures(), api.FeatureHandover):
		sess.handover = true
		s.logger.Infof(ctx, "plugin %s: runtime (NRI %s) offers handover; ready once made active", s.Name(), rpl.GetNRIVersion())
	default:
		s.logger.Infof(ctx, "plugin %s: runtime (NRI %s) does not offer handover; ready once synchronized", s.Name(), rpl.GetNRIVersion())
	}
	s.evalReadiness(sess)
	return nil
}
