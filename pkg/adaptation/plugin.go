package adaptation

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/containerd/ttrpc"

	"github.com/nri-handover/nri/api"
	nrinet "github.com/nri-handover/nri/pkg/net"
	"github.com/nri-handover/nri/pkg/net/multiplex"
)

// pluginKind tells how a plugin reached the runtime.
type pluginKind int

const (
	kindExternal pluginKind = iota // connected to the socket on its own
	kindLaunched                   // pre-installed, started by us over a socketpair
	kindBuiltin                    // in-process
)

func (k pluginKind) String() string {
	switch k {
	case kindExternal:
		return "external"
	case kindLaunched:
		return "pre-connected"
	case kindBuiltin:
		return "builtin"
	}
	return "unknown"
}

// plugin is one connected plugin instance, from connection to close.
type plugin struct {
	r    *Adaptation
	kind pluginKind
	seq  uint64 // registration order; the last tie-breaker of dispatch order

	// inEvent counts the events being relayed to the plugin: an
	// UpdateContainers it sends meanwhile may come from its handler, which
	// a hold queued behind that event would wait for (passHolds).
	inEvent atomic.Int32

	idx      string
	base     string
	fullName string // idx-base, see setName
	cfg      string // configuration for pre-installed plugins

	// What the plugin said about itself in RegisterPlugin.
	nriVersion string
	version    string
	instance   string
	generation uint64
	features   []string

	// What the plugin asked for in Configure.
	events api.EventMask
	policy *api.FailurePolicy

	svc api.PluginService // ttrpc client or builtin implementation

	// Transport, nil for builtin plugins.
	mux    multiplex.Mux
	rpcc   *ttrpc.Client
	rpcs   *ttrpc.Server
	rpcl   net.Listener
	served chan struct{} // closed when the runtime service stops serving
	// serveOnce starts serving the runtime service (start), or, if the
	// plugin is torn down first, closes served: teardown waits for it.
	serveOnce sync.Once
	// cred is who connected, read once when the connection was accepted
	// (supersede.go); unknownPeer for builtin plugins.
	cred PeerCredentials
	// cgroup is the peer's cgroup, read race-free at the same moment with
	// the workload rule on (identity); cgroupErr says why it is not known.
	cgroup    string
	cgroupErr error
	// ident is where the runtime placed the peer: nil until resolved when
	// it registered (resolveIdentities), then fixed. Guarded by the
	// registry's lock.
	ident *verified

	// Process of a launched plugin.
	cmd    *exec.Cmd
	exited chan struct{}

	regC  chan error    // result of RegisterPlugin, buffered
	lostC chan struct{} // closed when the connection is gone
	doneC chan struct{} // closed when the plugin is fully torn down

	mu     sync.Mutex
	conn   connPhase
	legacy map[api.Event]bool // events relayed through StateChange
	warned map[api.Event]bool

	// Membership, guarded by the registry's lock and written by
	// registry.move alone: the slot the plugin was placed in
	// at registration, its state there and, for opted-in plugins, the role.
	slot  *slot
	state instanceState
	role  api.PluginRole
	// join is where its join is (joining): configured or not, running
	// under the gate or from the ledger, switched. One value for every kind
	// of plugin, though only a workload group's member (admission's newer row)
	// is configured long before it joins, if ever.
	join joinPhase
	// notices orders role notices to the instance (tellRole): a STANDBY
	// told outside any hold (a switch to a build without handover) and the
	// ACTIVE of its reactivation must not cross.
	notices sync.Mutex

	lostOnce     sync.Once
	teardownOnce sync.Once
}

// connPhase is where a plugin's connection is, guarded by p.mu: one value,
// so that a plugin being disconnected is never taken for a registered one.
type connPhase int

const (
	connOpen       connPhase = iota // connected (a builtin: created), not registered
	connRegistered                  // its registration was accepted (a builtin or launched one: by Start)
	connClosing                     // being or been disconnected (beginClose)
)

func (r *Adaptation) newPlugin(kind pluginKind) *plugin {
	return &plugin{
		r:      r,
		kind:   kind,
		regC:   make(chan error, 1),
		lostC:  make(chan struct{}),
		doneC:  make(chan struct{}),
		served: make(chan struct{}),
		cred:   unknownPeer,
		// Read at connection with the workload rule on (connect); a plugin
		// without a connection cannot be placed.
		cgroupErr: errIdentityUnsupported,
		legacy:    map[api.Event]bool{},
		warned:    map[api.Event]bool{},
	}
}

// setName records the plugin's index and name. The joined form is kept
// because every event and conflict report asks for it.
func (p *plugin) setName(idx, base string) {
	p.idx, p.base, p.fullName = idx, base, idx+"-"+base
}

// name is the identification used in logs, errors and conflict reports.
func (p *plugin) name() string {
	if p.fullName == "" {
		return p.idx + "-" + p.base
	}
	return p.fullName
}

// qualifiedName adds how the plugin is connected and its pid (0 if unknown).
func (p *plugin) qualifiedName() string {
	idx, base := p.idx, p.base
	if idx == "" {
		idx = "??"
	}
	if base == "" {
		base = "plugin"
	}
	s := p.kind.String() + ":" + idx + "-" + base
	if p.kind != kindBuiltin {
		s += "[" + strconv.Itoa(max(p.cred.PID, 0)) + "]"
	}
	return s
}

func (p *plugin) subscribed(e api.Event) bool {
	return p.events.IsSet(e)
}

// receives tells whether an event goes to p, once it is in the dispatch list.
func (p *plugin) receives(e api.Event) bool {
	return !p.isClosed() && p.subscribed(e)
}

func (p *plugin) isValidator() bool {
	return p.subscribed(api.Event_VALIDATE_CONTAINER_ADJUSTMENT)
}

// isRegistered reports whether the plugin's registration was accepted.
func (p *plugin) isRegistered() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.conn == connRegistered
}

// isClosed reports whether the plugin is being or has been disconnected.
func (p *plugin) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.conn == connClosing
}

// beginClose marks the plugin closing; only the first caller gets true.
func (p *plugin) beginClose() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conn == connClosing {
		return false
	}
	p.conn = connClosing
	return true
}

// connect sets up the multiplexed connection: our ttrpc client for the plugin
// service and our ttrpc server for the runtime service share conn.
func (p *plugin) connect(conn net.Conn) (retErr error) {
	conn = newDeadlineConn(conn, getRequestTimeout) // see conn.go
	mux := multiplex.Multiplex(conn, multiplex.WithBlockedRead())
	defer func() {
		if retErr != nil {
			mux.Close()
		}
	}()

	pconn, err := mux.Open(multiplex.PluginServiceConn)
	if err != nil {
		return fmt.Errorf("failed to open plugin service connection: %w", err)
	}
	// Until the plugin registers, neither ttrpc connection may declare a
	// large message (limits.go); a peer that does loses its connection.
	reject := func(err error) {
		p.r.log.Errorf(p.r.ctx, "closing connection of %s: %v", p.qualifiedName(), err)
		mux.Close()
	}
	pconn = newUnregisteredConn(pconn, p.isRegistered, reject)
	// Our close callback goes last so that a runtime's own WithOnClose
	// cannot replace it: losing it would leave dead plugins registered.
	opts := append(slices.Clone(p.r.clientOpts), ttrpc.WithOnClose(p.connectionLost))
	rpcc := ttrpc.NewClient(pconn, opts...)

	// The guard goes after the runtime's options: it is chained after (so
	// inside) an interceptor of theirs.
	sopts := append(slices.Clone(p.r.serverOpts), ttrpc.WithChainUnaryServerInterceptor(p.serverGuard()))
	rpcs, err := ttrpc.NewServer(sopts...)
	if err != nil {
		rpcc.Close()
		return fmt.Errorf("failed to create ttrpc server: %w", err)
	}
	rconn, err := mux.Open(multiplex.RuntimeServiceConn)
	if err != nil {
		rpcc.Close()
		rpcs.Close()
		return fmt.Errorf("failed to open runtime service connection: %w", err)
	}
	rpcl := nrinet.NewConnListener(newUnregisteredConn(rconn, p.isRegistered, reject))
	api.RegisterRuntimeService(rpcs, &runtimeService{p: p})

	p.mux, p.rpcc, p.rpcs, p.rpcl = mux, rpcc, rpcs, rpcl
	p.svc = api.NewPluginClient(rpcc)
	if cred, err := peerCredentials(mux.Trunk()); err == nil {
		p.cred = cred
	}
	if p.r.reg.policy.resolver != nil {
		p.cgroup, p.cgroupErr = peerCgroup(mux.Trunk())
	}
	return nil
}

// start serves the runtime service, waits for the plugin to register and
// configures it. On failure the plugin has been disconnected, with a reason.
func (p *plugin) start(ctx context.Context) error {
	if p.kind != kindBuiltin {
		p.serveOnce.Do(func() {
			go func() {
				defer close(p.served)
				_ = p.rpcs.Serve(context.Background(), p.rpcl)
			}()
		})
		p.mux.Unblock()

		timeout := getRegistrationTimeout()
		timer := time.NewTimer(timeout)
		defer timer.Stop()

		select {
		case err := <-p.regC:
			if err != nil {
				// RegisterPlugin logged the refusal; the disconnect
				// does not say it again.
				p.disconnect(api.ShutdownReason_SHUTDOWN_REASON_REGISTRATION_REJECTED, err.Error(), nil, false, true)
				return err
			}
		case <-p.lostC:
			p.shutdown(api.ShutdownReason_SHUTDOWN_REASON_UNSPECIFIED, "connection closed", nil)
			return fmt.Errorf("plugin %s: connection closed before registration", p.qualifiedName())
		case <-timer.C:
			// Close first: a registration arriving now is then refused
			// instead of racing with reading the plugin's name below.
			msg := fmt.Sprintf("registration timed out after %s", timeout)
			p.shutdown(api.ShutdownReason_SHUTDOWN_REASON_TIMEOUT, msg, nil)
			return fmt.Errorf("plugin %s: %s", p.qualifiedName(), msg)
		case <-ctx.Done():
			p.shutdown(api.ShutdownReason_SHUTDOWN_REASON_RUNTIME_SHUTDOWN, "runtime is shutting down", nil)
			return fmt.Errorf("plugin %s: registration aborted: %w", p.qualifiedName(), ctx.Err())
		}
	}

	if err := p.configure(ctx); err != nil {
		reason := api.ShutdownReason_SHUTDOWN_REASON_REGISTRATION_REJECTED
		if errors.Is(err, context.DeadlineExceeded) {
			reason = api.ShutdownReason_SHUTDOWN_REASON_TIMEOUT
		}
		p.shutdown(reason, err.Error(), nil)
		return err
	}
	return nil
}

// shutdown is the one way the runtime disconnects a plugin: it stops event
// delivery at once, tells the plugin why (bounded by shutdownTimeout) and
// closes it. It returns without waiting; the returned channel is closed when
// the plugin is fully torn down. successor names the instance taking over,
// for SHUTDOWN_REASON_SUPERSEDED.
func (p *plugin) shutdown(reason api.ShutdownReason, msg string, successor *plugin) <-chan struct{} {
	return p.disconnect(reason, msg, successor, false, false)
}

// supersede is shutdown for an instance a switch replaced: the notice is
// delivered (or times out) before it returns, so the successor is told it is
// active only after its predecessor heard it is not; the rest of the
// teardown happens in the background.
func (p *plugin) supersede(msg string, successor *plugin) {
	p.disconnect(api.ShutdownReason_SHUTDOWN_REASON_SUPERSEDED, msg, successor, true, false)
}

// disconnect is shutdown and supersede; logged tells that msg is in the
// runtime's log already.
func (p *plugin) disconnect(reason api.ShutdownReason, msg string, successor *plugin, waitNotice, logged bool) <-chan struct{} {
	// Out of event delivery first: if p was active and a standby waits, the
	// registry reserves the sync gate before anything else can happen.
	p.r.reg.remove(p)
	if !p.beginClose() {
		return p.doneC
	}

	req := &api.ShutdownRequest{Reason: reason, Message: msg}
	if successor != nil {
		req.SuccessorVersion = successor.version
		req.SuccessorInstance = successor.instance
		req.SuccessorGeneration = successor.generation
	}
	if logged {
		p.r.log.Infof(p.r.ctx, "disconnecting plugin %s (%s)", p.qualifiedName(), reason)
	} else {
		p.r.log.Infof(p.r.ctx, "disconnecting plugin %s (%s): %s", p.qualifiedName(), reason, msg)
	}

	if waitNotice {
		p.notifyShutdown(req)
		go p.teardown()
		return p.doneC
	}
	go func() {
		p.notifyShutdown(req)
		p.teardown()
	}()
	return p.doneC
}

// tellsShutdown decides whether disconnecting p for reason sends it the
// Shutdown RPC first. It is the only place that decides it; disconnect asks
// it once p is closing, when p's registration (and so whether it opted in)
// can no longer change.
//
// A plugin that opted into handover (handsOver) is told on every disconnect,
// with the reason: that is part of the feature it asked for. Any other plugin
// (pre-installed, builtin, external without api.FeatureHandover, or any
// plugin when the runtime does not offer handover) gets what upstream
// containerd/nri v0.12.5 gives it, and upstream's pkg/adaptation never calls
// Plugin.Shutdown: the only call of it in that module is the plugin-side WASM
// export generated into upstream's pkg/api. Upstream's disconnects, by the reason
// ours gives, and what each does instead of telling the plugin:
//
//	RUNTIME_SHUTDOWN        adaptation.go:(*Adaptation).Stop → stopPlugins → plugin.go:(*plugin).stop
//	                        kills a launched plugin, leaves an external one connected;
//	                        adaptation.go:startPlugins on a failed Start: (*plugin).stop
//	REGISTRATION_REJECTED   plugin.go:(*plugin).start, an error on regC (invalid name or index):
//	                        returns the error, the plugin reads it in RegisterPlugin's reply;
//	                        plugin.go:(*plugin).start, configure failed: close, stop
//	TIMEOUT                 plugin.go:(*plugin).start, registration timed out: close, stop;
//	                        configure timed out: close, stop;
//	                        plugin.go:handleRequestError and ValidateContainerAdjustment,
//	                        request timeout (unless KeepConnected): close
//	SYNCHRONIZATION_FAILED  adaptation.go:acceptPluginConnections, syncFn failed: close;
//	                        adaptation.go:startPlugins (syncPlugins), synchronize failed: stop
//	PROTOCOL_ERROR          plugin.go:(*plugin).synchronize, split rounds not handled: close;
//	                        plugin.go:handleRequestError and ValidateContainerAdjustment,
//	                        ttrpc.ErrProtocol: close
//	UNSPECIFIED             plugin.go:handleRequestError, ttrpc.ErrClosed: close;
//	                        plugin.go:(*plugin).start, connection closed before registering
//	SUPERSEDED              no counterpart: upstream keeps instances of one name side by side
//	REMOVED                 no counterpart; never sent by us either
//
// So for such a plugin the answer is no, whatever the reason. If a later
// upstream sends Shutdown somewhere, that reason is answered here, for such
// plugins, and nowhere else. The reason is a parameter for that.
func (p *plugin) tellsShutdown(api.ShutdownReason) bool {
	return p.handsOver()
}

// notifyShutdown tells the plugin why it is disconnected if tellsShutdown
// says so, bounded by shutdownTimeout.
func (p *plugin) notifyShutdown(req *api.ShutdownRequest) {
	select {
	case <-p.lostC:
		return
	default:
	}
	if p.svc == nil {
		return // never connected: nobody to tell
	}
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if p.tellsShutdown(req.Reason) {
		if _, err := p.svc.Shutdown(ctx, req); err != nil {
			p.r.log.Debugf(ctx, "plugin %s did not acknowledge shutdown: %v", p.name(), err)
		}
	}
	if req.Reason == api.ShutdownReason_SHUTDOWN_REASON_REGISTRATION_REJECTED {
		// The error reply to RegisterPlugin travels on the other service
		// of the connection; give the plugin the chance to read it and
		// hang up before we close.
		select {
		case <-p.lostC:
		case <-ctx.Done():
		}
	}
}

// connectionLost is the ttrpc client's close callback: the plugin went away
// (or we closed the connection ourselves).
func (p *plugin) connectionLost() {
	p.lostOnce.Do(func() { close(p.lostC) })
	p.r.reg.remove(p) // before closing: see shutdown
	p.r.trace(nil, pointLost, p)
	if !p.beginClose() {
		return
	}
	p.r.log.Infof(p.r.ctx, "connection to plugin %s closed", p.qualifiedName())
	p.teardown()
}

// teardown closes the transport, stops a launched process and forgets the
// plugin. It runs once and closes doneC when finished.
func (p *plugin) teardown() {
	p.r.atFor(pointDisconnect, p)
	p.teardownOnce.Do(func() {
		if p.kind != kindBuiltin && p.mux != nil {
			// Let answers already on their way out (RegisterPlugin's reply
			// races with a quick failure right after it) reach the plugin.
			ctx, cancel := context.WithTimeout(context.Background(), replyDrainTimeout)
			_ = p.rpcs.Shutdown(ctx)
			cancel()
			p.rpcc.Close()
			p.rpcs.Close()
			p.rpcl.Close()
			p.mux.Close()
			p.serveOnce.Do(func() { close(p.served) }) // never served
			<-p.served
		}
		p.stopProcess()
		p.r.reg.untrack(p)
		close(p.doneC)
	})
}

// stopProcess waits a grace period for a launched plugin to exit after its
// connection closed, then kills it.
func (p *plugin) stopProcess() {
	if p.cmd == nil || p.exited == nil {
		return
	}
	timer := time.NewTimer(processGracePeriod)
	defer timer.Stop()
	select {
	case <-p.exited:
		return
	case <-timer.C:
	}
	p.r.log.Warnf(p.r.ctx, "plugin %s did not exit, killing it", p.qualifiedName())
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// handsOver tells whether the plugin takes part in handover: it asked for it,
// it is external, and the runtime offers it.
func (p *plugin) handsOver() bool {
	return p.r.handover && p.kind == kindExternal && api.HasFeature(p.features, api.FeatureHandover)
}

// deltaSync tells whether the plugin accepts more than one synchronization
// round on its connection.
func (p *plugin) deltaSync() bool {
	return p.handsOver() && api.HasFeature(p.features, api.FeatureDeltaSync)
}

// offeredFeatures are the protocol features the runtime offers p: only those
// p asked for.
func (p *plugin) offeredFeatures() []string {
	switch {
	case p.deltaSync():
		return []string{api.FeatureHandover, api.FeatureDeltaSync}
	case p.handsOver():
		return []string{api.FeatureHandover}
	}
	return nil
}
