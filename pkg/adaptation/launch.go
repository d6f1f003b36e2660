package adaptation

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/pkg/adaptation/builtin"
	nrinet "github.com/nri-handover/nri/pkg/net"
)

// discovered is a pre-installed plugin found in the plugin directory.
type discovered struct {
	idx, base, cfg string
}

// startPlugins brings up builtin plugins, then pre-installed ones, and
// synchronizes them all in one call of the runtime's SyncFn, as upstream
// does (once, even with no plugin): that call also seeds the ledger. A
// failing builtin plugin fails Start; a pre-installed one that fails to
// start or synchronize is logged and left out, as upstream does.
func (r *Adaptation) startPlugins() error {
	var started []*plugin
	for _, b := range r.builtin {
		p, err := r.newBuiltinPlugin(b)
		if err != nil {
			return err
		}
		if err := p.start(r.ctx); err != nil {
			return fmt.Errorf("failed to start builtin NRI plugin %q: %w", b.Base, err)
		}
		if err := joinOf(r.reg, p).screen(r.ctx); err != nil {
			<-p.shutdown(api.ShutdownReason_SHUTDOWN_REASON_REGISTRATION_REJECTED, err.Error(), nil)
			return fmt.Errorf("failed to start builtin NRI plugin %q: %w", b.Base, err)
		}
		started = append(started, p)
	}

	found, err := r.discoverPlugins()
	if err != nil {
		return err
	}
	// Launch and register them all at once.
	launched := make([]*plugin, len(found))
	var wg sync.WaitGroup
	for i, d := range found {
		spawn(&wg, func() {
			p, err := r.launchPlugin(d)
			if err != nil {
				r.log.Warnf(r.ctx, "failed to launch pre-installed NRI plugin %s-%s: %v", d.idx, d.base, err)
				return
			}
			if err := p.start(r.ctx); err != nil {
				r.log.Warnf(r.ctx, "failed to start pre-installed NRI plugin %s: %v", p.name(), err)
				return
			}
			launched[i] = p
		})
	}
	wg.Wait()
	for _, p := range launched {
		if p != nil {
			started = append(started, p)
		}
	}
	return r.syncStarted(started)
}

// syncStarted synchronizes the plugins Start brought up from one SyncFn call
// under the sync gate, and lets those that took it receive events.
func (r *Adaptation) syncStarted(started []*plugin) error {
	var synced []*plugin
	err := r.syncRound(r.ctx, gateRound{listing: func(ctx context.Context, pods []*PodSandbox, ctrs []*Container) []*ContainerUpdate {
		var updates []*ContainerUpdate
		synced = synced[:0]
		for _, p := range started {
			us, err := p.synchronize(ctx, pods, ctrs, nil)
			if err != nil {
				r.log.Warnf(r.ctx, "failed to synchronize pre-installed NRI plugin %s: %v", p.name(), err)
				p.shutdown(r.syncFailureReason(err), err.Error(), nil)
				continue
			}
			synced = append(synced, p)
			updates = append(updates, us...)
		}
		return updates
	}})
	switch {
	case errors.Is(err, errNoListing):
		if len(started) > 0 {
			r.log.Warnf(r.ctx, "runtime's SyncFn returned without synchronizing the %d plugins started", len(started))
		}
		for _, p := range started {
			p.shutdown(api.ShutdownReason_SHUTDOWN_REASON_SYNCHRONIZATION_FAILED, "runtime did not synchronize the plugins", nil)
		}
		return nil
	case err != nil:
		for _, p := range started {
			p.shutdown(api.ShutdownReason_SHUTDOWN_REASON_RUNTIME_SHUTDOWN, "runtime failed to start", nil)
		}
		return fmt.Errorf("failed to synchronize pre-installed NRI plugins: %w", err)
	}
	for _, p := range synced {
		if _, _, err := joinOf(r.reg, p).switchTo(r.ctx, nil, nil); err != nil {
			r.log.Warnf(r.ctx, "failed to admit pre-installed NRI plugin %s: %v", p.name(), err)
			p.shutdown(api.ShutdownReason_SHUTDOWN_REASON_REGISTRATION_REJECTED, err.Error(), nil)
		}
	}
	return nil
}

func (r *Adaptation) newBuiltinPlugin(b *builtin.BuiltinPlugin) (*plugin, error) {
	if b == nil || b.Base == "" || b.Index == "" {
		return nil, errors.New("builtin NRI plugin without index or name")
	}
	if err := api.CheckPluginIndex(b.Index); err != nil {
		return nil, fmt.Errorf("builtin NRI plugin %q: %w", b.Base, err)
	}
	p := r.newPlugin(kindBuiltin)
	p.svc = b
	p.setName(b.Index, b.Base)
	p.conn = connRegistered
	if err := r.reg.track(p); err != nil {
		return nil, err
	}
	return p, nil
}

// discoverPlugins lists the executables named NN-name in the plugin
// directory, with their configuration.
func (r *Adaptation) discoverPlugins() ([]discovered, error) {
	entries, err := os.ReadDir(r.pluginPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("failed to discover plugins in %s: %w", r.pluginPath, err)
	}

	var found []discovered
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		info, err := e.Info()
		if err != nil || info.Mode()&0o111 == 0 {
			continue
		}
		idx, base, err := api.ParsePluginName(e.Name())
		if err != nil {
			return nil, fmt.Errorf("failed to discover plugins in %s: %w", r.pluginPath, err)
		}
		cfg, err := r.pluginConfig(idx, base)
		if err != nil {
			return nil, err
		}
		r.log.Infof(r.ctx, "discovered pre-installed plugin %s", e.Name())
		found = append(found, discovered{idx: idx, base: base, cfg: cfg})
	}
	slices.SortFunc(found, func(a, b discovered) int {
		if a.idx+"-"+a.base < b.idx+"-"+b.base {
			return -1
		}
		return 1
	})
	return found, nil
}

// pluginConfig reads NN-name.conf, or else name.conf, from the config directory.
func (r *Adaptation) pluginConfig(idx, base string) (string, error) {
	for _, file := range []string{idx + "-" + base + ".conf", base + ".conf"} {
		buf, err := os.ReadFile(filepath.Join(r.configPath, file))
		if err == nil {
			return string(buf), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("failed to read configuration of plugin %s-%s: %w", idx, base, err)
		}
	}
	return "", nil
}

// launchPlugin starts a pre-installed plugin with one end of a socketpair as
// file descriptor 3, announced with upstream's environment variables.
func (r *Adaptation) launchPlugin(d discovered) (p *plugin, retErr error) {
	name := d.idx + "-" + d.base

	sockets, err := nrinet.NewSocketPair()
	if err != nil {
		return nil, fmt.Errorf("failed to create connection for plugin %s: %w", name, err)
	}
	conn, err := sockets.LocalConn()
	if err != nil {
		sockets.Close()
		return nil, fmt.Errorf("failed to create connection for plugin %s: %w", name, err)
	}
	peer := sockets.PeerFile()
	defer peer.Close()
	defer func() {
		if retErr != nil {
			conn.Close()
		}
	}()

	cmd := exec.Command(filepath.Join(r.pluginPath, name))
	cmd.ExtraFiles = []*os.File{peer}
	cmd.Env = []string{
		api.PluginNameEnvVar + "=" + d.base,
		api.PluginIdxEnvVar + "=" + d.idx,
		api.PluginSocketEnvVar + "=3",
	}

	p = r.newPlugin(kindLaunched)
	p.cfg, p.cmd = d.cfg, cmd
	p.setName(d.idx, d.base)
	if err := r.reg.track(p); err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		r.reg.untrack(p)
		return nil, fmt.Errorf("failed to launch plugin %s: %w", name, err)
	}
	p.exited = make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()

	if err := p.connect(conn); err != nil {
		// Stops the process after the grace period.
		<-p.shutdown(api.ShutdownReason_SHUTDOWN_REASON_PROTOCOL_ERROR, err.Error(), nil)
		return nil, fmt.Errorf("failed to connect to plugin %s: %w", name, err)
	}
	return p, nil
}
