package stub

import (
	"context"
	"errors"
	"fmt"
	stdnet "net"
	"sync"

	"github.com/containerd/ttrpc"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/pkg/net/multiplex"
)

// session is one connection to the runtime. The stub is restartable, so each
// Start gets a fresh session; RPC handlers hold on to the session they were
// registered for, and a late call on a dead session cannot disturb a new one.
type session struct {
	mux     multiplex.Mux
	lis     stdnet.Listener
	srv     *ttrpc.Server
	cli     *ttrpc.Client
	runtime api.RuntimeService

	cfgC      chan error    // outcome of the first Configure
	shutdownC chan struct{} // closed when Shutdown arrives
	serveDone chan struct{} // closed when the ttrpc server returned
	doneC     chan struct{} // closed when the connection is torn down
	stopC     chan struct{} // closed by Stop

	cfgOnce, shutdownOnce, stopOnce, closeOnce sync.Once

	// Guarded by stub.mu.
	registered bool
	configured bool
	synced     bool // a full Synchronize completed
	handover   bool // the runtime offers api.FeatureHandover
	closed     bool
	stopped    bool // closed by Stop rather than by the runtime
	role       api.PluginRole
	shutdown   *ShutdownError
	pending    *api.SynchronizeRequest // chunks of a Synchronize in progress
}

// Start connects to the runtime, registers and waits for Configure.
func (s *stub) Start(ctx context.Context) error {
	_, err := s.start(ctx)
	return err
}

func (s *stub) start(ctx context.Context) (*session, error) {
	if _, err := s.serveReadyz(); err != nil {
		return nil, err
	}
	sess, err := s.open(ctx)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: %w", s.Name(), err)
	}

	if err := s.register(ctx, sess); err != nil && !s.configured(sess) {
		s.awaitShutdownNotice(sess)
		s.teardown(sess)
		return nil, s.withShutdown(sess, err)
	}
	// A runtime that configured us accepted the registration, even if its
	// reply got lost in a connection that has already ended since.

	var cfgErr error
	select {
	case cfgErr = <-sess.cfgC:
	case <-sess.doneC:
		select {
		case cfgErr = <-sess.cfgC:
		default:
			return nil, s.withShutdown(sess, fmt.Errorf("plugin %s: connection closed before configuration: %w", s.Name(), ErrDisconnected))
		}
	case <-ctx.Done():
		s.teardown(sess)
		return nil, fmt.Errorf("plugin %s: waiting for configuration: %w", s.Name(), ctx.Err())
	}
	if cfgErr != nil {
		s.awaitShutdownNotice(sess)
		s.teardown(sess)
		return nil, s.withShutdown(sess, fmt.Errorf("plugin %s: configure failed: %w", s.Name(), cfgErr))
	}

	s.logger.Infof(ctx, "started plugin %s", s.Name())
	return sess, nil
}

// open connects and sets up a new current session. The connection is made
// without holding s.mu, so a slow dialer does not block Stop or the getters;
// s.starting keeps a concurrent Start out meanwhile.
func (s *stub) open(ctx context.Context) (*session, error) {
	s.mu.Lock()
	if s.starting || (s.cur != nil && !s.cur.closed) {
		s.mu.Unlock()
		return nil, errors.New("already started")
	}
	s.starting = true
	given := s.conn
	s.conn = nil
	s.mu.Unlock()

	sess, err := s.dialSession(ctx, given)

	s.mu.Lock()
	defer s.mu.Unlock()
	s.starting = false
	if err != nil {
		return nil, err
	}
	s.cur = sess
	s.evalReadiness(sess)
	return sess, nil
}

func (s *stub) dialSession(ctx context.Context, conn stdnet.Conn) (*session, error) {
	if conn == nil {
		var err error
		if conn, err = s.connect(); err != nil {
			return nil, fmt.Errorf("connecting to the runtime: %w", err)
		}
	}
	sess, err := s.newSession(ctx, conn)
	if err != nil {
		conn.Close()
		return nil, err
	}
	return sess, nil
}

// Run starts the plugin and blocks until it is done; see Stub.Run.
func (s *stub) Run(ctx context.Context) error {
	// Served until Run returns, if this Run started serving it: a Run
	// refused because the stub is already started leaves it to that start.
	serving, err := s.serveReadyz()
	if err != nil {
		return err
	}
	if serving {
		defer s.stopReadyz()
	}
	sess, err := s.start(ctx)
	if err != nil {
		return err
	}

	select {
	case <-sess.doneC:
	case <-ctx.Done():
		s.Stop()
		if err := s.endError(sess); err != nil {
			return err
		}
		return ctx.Err()
	}

	err = s.endError(sess)
	if s.holdSuperseded(sess) {
		s.logger.Infof(ctx, "plugin %s stays up until stopped, serving no events", s.Name())
		select {
		case <-sess.stopC:
		case <-ctx.Done():
			s.Stop()
		}
	}
	return err
}

// Stop closes the current connection, releases a held superseded Run and
// stops serving /readyz.
func (s *stub) Stop() {
	defer s.stopReadyz()
	s.mu.Lock()
	sess := s.cur
	if sess != nil {
		sess.stopped = true
		s.evalReadiness(sess) // a held superseded instance is no longer handed over
	}
	s.mu.Unlock()
	if sess == nil {
		return
	}
	s.logger.Infof(context.Background(), "stopping plugin %s", s.Name())
	sess.stopOnce.Do(func() { close(sess.stopC) })
	s.teardown(sess)
}

// Wait blocks until the current connection is over and, for a superseded
// plugin held up by default, until Stop.
func (s *stub) Wait() {
	s.mu.Lock()
	sess := s.cur
	s.mu.Unlock()
	if sess == nil {
		return
	}
	<-sess.doneC
	if s.holdSuperseded(sess) {
		<-sess.stopC
	}
}

// configured tells whether the runtime got as far as configuring sess.
func (s *stub) configured(sess *session) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sess.configured
}

// holdSuperseded tells whether a finished session must keep its Run/Wait
// blocking because the plugin was superseded.
func (s *stub) holdSuperseded(sess *session) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sess.shutdown != nil && sess.shutdown.Superseded() && !s.exitOnSuperseded && !sess.stopped
}

// endError is what Run reports for a finished session: the runtime's reason
// if it gave one, nothing after Stop, ErrDisconnected otherwise.
func (s *stub) endError(sess *session) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case sess.shutdown != nil:
		return sess.shutdown
	case sess.stopped:
		return nil
	default:
		return fmt.Errorf("plugin %s: %w: %w", s.Name(), ErrDisconnected, ttrpc.ErrServerClosed)
	}
}

// withShutdown prefers the runtime's stated reason over the transport error
// it caused, keeping both in the chain but saying only the reason: the
// failed call carries the same refusal again.
func (s *stub) withShutdown(sess *session, err error) error {
	s.mu.Lock()
	sd := sess.shutdown
	s.mu.Unlock()
	if sd == nil {
		return err
	}
	return &statedError{sd: sd, cause: err}
}

// statedError is the runtime's reason for a failure, with the failure.
type statedError struct {
	sd    *ShutdownError
	cause error
}

func (e *statedError) Error() string   { return e.sd.Error() }
func (e *statedError) Unwrap() []error { return []error{e.sd, e.cause} }

// awaitShutdownNotice gives a runtime that refused us a moment to say why
// before we hang up: it may send Shutdown right after failing the call.
func (s *stub) awaitShutdownNotice(sess *session) {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownNoticeWait)
	defer cancel()
	select {
	case <-sess.shutdownC:
	case <-sess.doneC:
	case <-ctx.Done():
	}
}

// connect returns an inherited socket for pre-installed plugins or dials
// the runtime's socket.
func (s *stub) connect() (stdnet.Conn, error) {
	if conn, ok, err := inheritedConn(); ok || err != nil {
		return conn, err
	}
	return s.dialer(s.socketPath)
}

// teardown closes everything of a session once, then tells the plugin.
func (s *stub) teardown(sess *session) {
	first := false
	sess.closeOnce.Do(func() {
		s.mu.Lock()
		sess.closed = true
		sess.pending = nil
		s.evalReadiness(sess)
		s.mu.Unlock()

		sess.lis.Close()
		sess.srv.Close()
		sess.cli.Close()
		sess.mux.Close()
		<-sess.serveDone
		close(sess.doneC)
		first = true
	})
	// Outside the Once: an onClose that calls Stop must not deadlock.
	if first {
		s.logger.Infof(context.Background(), "plugin %s: connection to the runtime closed", s.Name())
		if s.onClose != nil {
			s.onClose()
		}
	}
}

// evalReadiness derives readiness from the session's state. Only the current
// session speaks for the stub. Called with s.mu held.
func (s *stub) evalReadiness(sess *session) {
	if sess != s.cur {
		return
	}
	switch {
	case sess.shutdown != nil && sess.shutdown.Superseded() && !s.exitOnSuperseded && !sess.stopped:
		s.ready.set(handedOver, sess.shutdown.Error())
	case sess.closed:
		s.ready.set(notReady, "not connected to the runtime")
	case sess.shutdown != nil:
		s.ready.set(notReady, sess.shutdown.Error())
	case sess.handover && sess.role == api.PluginRole_PLUGIN_ROLE_ACTIVE:
		s.ready.set(active, "")
	case sess.handover && sess.role == api.PluginRole_PLUGIN_ROLE_STANDBY:
		s.ready.set(handedOver, "standby: another instance is active")
	case sess.handover:
		s.ready.set(notReady, "waiting for the runtime to make this instance active")
	case sess.synced && (sess.registered || sess.configured):
		s.ready.set(active, "")
	default:
		s.ready.set(notReady, "registering and synchronizing")
	}
}
