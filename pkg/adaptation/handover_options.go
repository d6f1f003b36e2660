package adaptation

import (
	"fmt"
	"time"
)

// handoverPolicy is what the runtime chose about handover.
type handoverPolicy struct {
	grace            time.Duration // how long a superseded instance stays as a standby
	resumeBound      time.Duration // tests only: resumeBound's, if set
	refuseDowngrades bool
	supersede        SupersedePolicy  // who may supersede whom (supersede.go); nil is SupersedeSameUID
	resolver         WorkloadResolver // the workload rule's (identity); nil turns the rule off
}

// WithPluginHandover turns handover on (the default) or off. It applies only
// to external plugins that ask for it (api.FeatureHandover); every other
// plugin is treated as upstream NRI treats it either way. Off, no plugin is
// offered handover, so every instance of every plugin receives every event.
func WithPluginHandover(enabled bool) Option {
	return func(r *Adaptation) error {
		r.handover = enabled
		return nil
	}
}

// WithStandbyGrace keeps a superseded instance that runs outside any pod
// connected, without events, for d after the switch, if it supports several
// synchronization rounds (api.FeatureDeltaSync). If its successor
// disconnects within d, the standby is re-synchronized and becomes active
// again. Zero (the default) disconnects such an instance right after the
// switch. An instance the runtime placed in a pod stands by, whatever d, for
// as long as its connection lives (its pod's deletion ends it): standbyTerm.
func WithStandbyGrace(d time.Duration) Option {
	return func(r *Adaptation) error {
		if d < 0 {
			return fmt.Errorf("invalid standby grace period %s", d)
		}
		r.reg.policy.grace = d
		return nil
	}
}

// WithWorkloadIdentity turns the workload rule on (the default) or off. On,
// the runtime places each opted-in plugin's process in the pod it runs in,
// from the peer's cgroup and the containers the runtime lists: an instance
// in a pod may take over only from an instance in a pod of the same workload
// (same namespace, same controller: KubernetesResolver), precedence comes
// from the pod's pod-template-generation, and while an instance in a pod
// holds a name no process of another workload may register an opted-in
// instance of it. Between processes outside any pod the SupersedePolicy
// decides, as it does everywhere with the rule off. Plugins that did not opt
// into handover are never refused by it.
func WithWorkloadIdentity(enabled bool) Option {
	if enabled {
		return WithWorkloadResolver(KubernetesResolver{})
	}
	return WithWorkloadResolver(nil)
}

// WithWorkloadResolver sets what the workload rule knows of the runtime's
// pods: where a plugin's process runs, which workload that is, which
// instance is newer, and whether its pod opts plugins written for upstream
// into handover (resolver.go). KubernetesResolver is the default; nil turns
// the rule off, as WithWorkloadIdentity(false) does.
func WithWorkloadResolver(resolver WorkloadResolver) Option {
	return func(r *Adaptation) error {
		r.reg.policy.resolver = resolver
		return nil
	}
}

// WithRefuseDowngrades refuses a newcomer whose plugin version is lower than
// the active instance's. Rollbacks then need the old instance removed first.
func WithRefuseDowngrades() Option {
	return func(r *Adaptation) error {
		r.reg.policy.refuseDowngrades = true
		return nil
	}
}

// HandoverMetrics is implemented by a Metrics that also wants handover
// measurements. It is optional so that upstream-shaped Metrics keep working.
type HandoverMetrics interface {
	// RecordHandover reports one handover attempt of plugin: its outcome
	// ("completed", "rejected", "failed", "displaced", "reactivated"; and
	// "standby-unavailable" when an instance registers that a standby grace
	// cannot keep, having no delta rounds), how
	// long it took from registration, and how long runtime events waited for
	// its commit.
	RecordHandover(plugin, outcome string, duration, eventWait time.Duration)
}

// LedgerMetrics is implemented by a Metrics that also wants to know how
// exact the adaptation's record of the runtime's state is. It is optional,
// as HandoverMetrics is.
type LedgerMetrics interface {
	// RecordLedgerComparison reports one comparison of the record with
	// what SyncFn returned: the number of pods and containers that differ
	// (missing, extra or different). Anything but 0 means takeovers are
	// synchronized under the sync gate, from SyncFn, until a comparison
	// finds 0.
	RecordLedgerComparison(differing int)
}
